import { afterEach, describe, expect, test } from "bun:test";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { createHarness, logLine, type Harness } from "./watchdogHarness.ts";

let harness: Harness;
afterEach(() => harness.close());

const weird = {
  id: "app.weird",
  title: "Weird thing in the app",
  category: "daemon",
  severity: "error",
  event: "app.weird",
  component: "app",
};
const weirdLine = () => logLine("app.weird", {}, "app", "error");
const incident = () => new IncidentStore(harness.db).list({ limit: 10 }).find((i) => i.fingerprint === "app")!;
const kinds = () => new IncidentStore(harness.db).timeline(incident().id).map((e) => e.kind);

describe("an incident opened under a silence", () => {
  test("is decided and alerted when the silence expires while it is still open", async () => {
    harness = createHarness({ signatures: [weird], resolve_after_s: 3600 });
    harness.watchdog.silences.add("app", 10 * 60_000, "deploy", harness.clock.now);
    await harness.watchdog.ingestLine(weirdLine());
    expect(incident()).toMatchObject({ state: "open", action: null });
    expect(harness.events("watchdog.alert")).toEqual([]);

    await harness.advance(5 * 60_000);
    expect(harness.events("watchdog.alert")).toEqual([]);
    await harness.advance(5 * 60_000 + 1);
    expect(incident()).toMatchObject({ tier: 2, action: "alert" });
    expect(harness.events("watchdog.alert")).toHaveLength(1);
    expect(kinds()).toEqual(expect.arrayContaining(["silenced", "silence_ended", "action"]));

    // Decided once: later ticks do not page again.
    await harness.advance(60_000);
    expect(harness.events("watchdog.alert")).toHaveLength(1);
  });

  test("gets its tier 1 action when a person lifts the silence", async () => {
    harness = createHarness({
      signatures: [weird],
      rules: [{ id: "alert-on-weird", when: { signal: "app.weird" }, do: "alert" }],
      resolve_after_s: 3600,
    });
    const silence = harness.watchdog.silences.add("app.weird", 60 * 60_000, undefined, harness.clock.now);
    await harness.watchdog.ingestLine(weirdLine());
    await harness.advance(1000);
    expect(incident().action).toBeNull();
    harness.watchdog.silences.remove(silence.id);
    await harness.advance(1000);
    expect(incident()).toMatchObject({ tier: 1, action: "alert" });
    expect(harness.events("watchdog.alert")).toHaveLength(1);
  });

  test("that resolved while silenced is not decided when the silence ends", async () => {
    harness = createHarness({ signatures: [weird], resolve_after_s: 60 });
    harness.watchdog.silences.add("app", 10 * 60_000, undefined, harness.clock.now);
    await harness.watchdog.ingestLine(weirdLine());
    await harness.advance(2 * 60_000);
    expect(incident().state).toBe("resolved");
    await harness.advance(10 * 60_000);
    expect(incident().action).toBeNull();
    expect(harness.events("watchdog.alert")).toEqual([]);
  });
});
