import { afterEach, describe, expect, test } from "bun:test";
import { failoverTargets } from "../../src/watchdog/actions/providerAlternatives.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { createHarness, logLine, startAdminRecorder, type Harness } from "./watchdogHarness.ts";

let harness: Harness | undefined;
let admin: ReturnType<typeof startAdminRecorder> | undefined;
afterEach(() => {
  harness?.close();
  admin?.stop();
  harness = admin = undefined;
});

const limited = (model = "gpt-x") =>
  logLine("upstream.error", { provider: "primary", status: 429, cause: "http_429", model, message: "rate limited" });
const primary = { name: "primary", models: ["*"], aliases: {} };

describe("which providers a switch can fail over to", () => {
  test("by name, glob and alias; with the model unknown, any other provider", () => {
    const providers = [
      primary,
      { name: "exact", models: ["gpt-x"], aliases: {} },
      { name: "globbed", models: ["gpt-?"], aliases: {} },
      { name: "aliased", models: ["other"], aliases: { "claude-*": "other" } },
      { name: "elsewhere", models: ["llama-*"], aliases: {} },
    ];
    expect(failoverTargets(providers, "primary", "gpt-x")).toEqual(["exact", "globbed"]);
    expect(failoverTargets(providers, "primary", "claude-sonnet-4")).toEqual(["aliased"]);
    expect(failoverTargets(providers, "primary", "mistral")).toEqual([]);
    expect(failoverTargets([primary], "primary", undefined)).toEqual([]);
    expect(failoverTargets(providers, "primary", undefined)).toHaveLength(4);
  });
});

describe("switch-on-rate-limit (the default rule)", () => {
  test("is skipped when no other provider serves the model: no breaker opened, nothing learned, said on the incident", async () => {
    admin = startAdminRecorder();
    harness = createHarness({}, admin.url, { providers: [primary, { name: "backup", models: ["llama-*"], aliases: {} }] });
    for (let i = 0; i < 10; i++) await harness.watchdog.ingestLine(limited());
    expect(admin.calls).toEqual([]);
    expect(admin.breakerState()).toBe("ok");
    const store = new IncidentStore(harness.db);
    const [incident] = store.list();
    expect(incident).toMatchObject({ tier: 1, action: "switch_provider", verdict: "unverified" });
    const skipped = store.timeline(incident!.id).find((e) => e.kind === "action_skipped");
    expect(skipped?.message).toBe(
      "switch_provider skipped: no other provider serves model gpt-x; switching primary away would answer 503 for 300 s instead of the upstream's own rate limit",
    );
    expect(harness.watchdog.memory.learned()).toEqual([]);
  });

  test("switches when another provider serves the model", async () => {
    admin = startAdminRecorder();
    harness = createHarness({}, admin.url, { providers: [primary, { name: "backup", models: ["gpt-*"], aliases: {} }] });
    for (let i = 0; i < 10; i++) await harness.watchdog.ingestLine(limited());
    expect(admin.calls.map((c) => c.path)).toEqual(["/api/admin/proxy/providers/primary/breaker/open"]);
    expect(admin.breakerState()).toBe("open");
  });
});
