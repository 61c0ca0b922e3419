import { describe, expect, test } from "bun:test";
import { compileGlob, createModelMatcher } from "../../src/proxy/upstream/modelMatcher.ts";
import { ProviderHealth } from "../../src/proxy/upstream/providerHealth.ts";
import { routeModel, type RouteCandidate } from "../../src/proxy/upstream/providerRouter.ts";

function candidate(
  name: string,
  priority: number,
  weight = 1,
  models = ["*"],
  health: { errorRate?: number; latencyMs?: number } = {},
  asked: string[] = [],
): RouteCandidate<string> {
  return {
    provider: name,
    name,
    priority,
    weight,
    matcher: createModelMatcher(models, {}),
    health: () => {
      asked.push(name);
      return { errorRate: health.errorRate ?? 0, latencyMs: health.latencyMs };
    },
  };
}

/** A deterministic stand-in for Math.random: a small LCG. */
function seeded(seed = 42) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function firstPicks(candidates: RouteCandidate<string>[], runs = 4000): Record<string, number> {
  const random = seeded();
  const counts: Record<string, number> = {};
  for (let i = 0; i < runs; i++) {
    const first = routeModel(candidates, "m", random)[0]!.provider;
    counts[first] = (counts[first] ?? 0) + 1;
  }
  return counts;
}

describe("provider routing", () => {
  test("globs and aliases", () => {
    expect(compileGlob("gpt-4o*")("gpt-4o-mini")).toBe(true);
    expect(compileGlob("gpt-4o*")("gpt-4")).toBe(false);
    expect(compileGlob("llama-3.?")("llama-3.1")).toBe(true);
    expect(compileGlob("llama-3.?")("llama-3x1")).toBe(false);
    const matcher = createModelMatcher(["gpt-4o"], { fast: "gpt-4o-mini" });
    expect(matcher.resolve("fast")).toBe("gpt-4o-mini");
    expect(matcher.resolve("gpt-4o")).toBe("gpt-4o");
    expect(matcher.resolve("gpt-5")).toBeUndefined();
  });

  test("highest priority first, only providers that serve the model", () => {
    const routes = routeModel([candidate("low", 0), candidate("high", 5), candidate("other", 9, 1, ["claude-*"])], "gpt-4o", seeded());
    expect(routes.map((r) => r.provider)).toEqual(["high", "low"]);
  });

  test("weighted among equal priority", () => {
    const counts = firstPicks([candidate("a", 0, 3), candidate("b", 0, 1)]);
    expect(counts.a! / 4000).toBeGreaterThan(0.7);
    expect(counts.a! / 4000).toBeLessThan(0.8);
  });

  test("a failing or slow provider gets less traffic before any breaker opens", () => {
    const failing = firstPicks([candidate("ok", 0), candidate("bad", 0, 1, ["*"], { errorRate: 0.8 })]);
    expect(failing.ok! / 4000).toBeGreaterThan(0.75);
    const slow = firstPicks([candidate("fast", 0, 1, ["*"], { latencyMs: 100 }), candidate("slow", 0, 1, ["*"], { latencyMs: 1000 })]);
    expect(slow.fast! / 4000).toBeGreaterThan(0.85);
  });

  test("health is asked only where it weighs a draw: of providers sharing a priority, not of one alone in its own", () => {
    const asked: string[] = [];
    const routes = routeModel(
      [candidate("alone", 9, 1, ["*"], {}, asked), candidate("a", 0, 1, ["*"], {}, asked), candidate("b", 0, 1, ["*"], {}, asked)],
      "m",
      seeded(),
    );
    expect(routes[0]!.provider).toBe("alone");
    expect(asked.sort()).toEqual(["a", "b"]);
    asked.length = 0;
    routeModel([candidate("only", 0, 1, ["*"], {}, asked), candidate("other", 0, 1, ["claude-*"], {}, asked)], "m", seeded());
    expect(asked).toEqual([]);
  });

  test("health decays back toward healthy over time", () => {
    let now = 0;
    const health = new ProviderHealth(1000, () => now);
    for (let i = 0; i < 10; i++) health.record(false);
    const bad = health.errorRate();
    expect(bad).toBeGreaterThan(0.8);
    now += 3000;
    expect(health.errorRate()).toBeCloseTo(bad / 8, 5);
    health.record(true, 50);
    expect(health.latencyMs()).toBe(50);
  });
});
