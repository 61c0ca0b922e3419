import { describe, expect, test } from "bun:test";
import { RuleEngine, toRule } from "../../src/watchdog/decide/ruleEngine.ts";
import { ruleConfigSchema } from "../../src/core/config/sections/watchdogConfig.ts";

const storm = toRule(
  ruleConfigSchema().parse({ id: "storm", when: { signal: "upstream.server_error", count: 3, window_s: 60 }, do: "open_breaker" }),
  0,
);

describe("tier 1 rules", () => {
  test("fires once the count is reached within the window, per component", () => {
    const engine = new RuleEngine([storm], 3_600_000);
    expect(engine.observe("upstream.server_error", "provider:a", 0).kind).toBe("waiting");
    expect(engine.observe("upstream.server_error", "provider:b", 1).kind).toBe("waiting");
    expect(engine.observe("upstream.server_error", "provider:a", 2).kind).toBe("waiting");
    expect(engine.observe("upstream.server_error", "provider:a", 3)).toMatchObject({ kind: "fire", action: "open_breaker", firing: 1 });
    expect(engine.observe("other", "provider:a", 4).kind).toBe("none");
  });

  test("signals older than the window do not count", () => {
    const engine = new RuleEngine([storm], 3_600_000);
    engine.observe("upstream.server_error", "p", 0);
    engine.observe("upstream.server_error", "p", 1000);
    expect(engine.observe("upstream.server_error", "p", 61_000).kind).toBe("waiting");
  });

  test("cooldowns grow 30 s → 60 s → 300 s, then the rule only alerts; quiet resets it", () => {
    const engine = new RuleEngine(
      [toRule(ruleConfigSchema().parse({ id: "r", when: { signal: "s" }, do: "restart_worker" }), 0)],
      3_600_000,
    );
    const at = (t: number) => engine.observe("s", "worker", t * 1000);
    expect(at(0)).toMatchObject({ kind: "fire", action: "restart_worker", firing: 1 });
    expect(at(29)).toMatchObject({ kind: "cooldown" });
    expect(at(30)).toMatchObject({ kind: "fire", firing: 2 });
    expect(at(89)).toMatchObject({ kind: "cooldown" });
    expect(at(90)).toMatchObject({ kind: "fire", firing: 3, action: "restart_worker" });
    expect(at(389)).toMatchObject({ kind: "cooldown" });
    expect(at(390)).toMatchObject({ kind: "fire", firing: 4, action: "alert", alertOnly: true });
    expect(at(390 + 3600)).toMatchObject({ kind: "fire", firing: 1, action: "restart_worker", alertOnly: false });
  });
});
