import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { hasGenericSeverity, normaliseErrorText } from "../../src/watchdog/checks/unknownErrors.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { createHarness, type Harness } from "./watchdogHarness.ts";

describe("error lines no signature knows", () => {
  test.each([
    ["2026-11-26T10:00:01Z ERROR payment 4711 failed"],
    ["FATAL: could not open relation"],
    ["[CRITICAL] disk controller reset"],
    ["panic: runtime error: index out of range [3] with length 3"],
    ["Traceback (most recent call last):"],
    ['{"time":"x","level":"error","msg":"db gone"}'],
  ])("%s carries a generic severity", (line) => {
    expect(hasGenericSeverity(line)).toBe(true);
  });

  test.each([["served 200 requests, 0 errors"], ["error_rate=0.01"], ["INFO all good"], ['{"level":"info","msg":"ERRORS: none"}']])(
    "%s does not",
    (line) => {
      expect(hasGenericSeverity(line)).toBe(false);
    },
  );

  test("lines of one failure normalise to one text: numbers, hex, uuids and paths stripped", () => {
    const a = normaliseErrorText(
      "2026-11-26T10:00:01Z ERROR job 4711 (id 3f2a9c1e-1b2c-4d5e-8f90-0a1b2c3d4e5f) at 0x7ffd1234 failed reading /var/lib/app/q/17.dat",
    );
    const b = normaliseErrorText(
      "2026-11-26T11:42:59Z ERROR job 12 (id 00000000-1111-4222-8333-444444444444) at 0xdeadbeef failed reading /srv/other.dat",
    );
    expect(a).toBe(b);
    expect(a).toBe("<n>-<n>-<n>T<n>Z ERROR job <n> (id <uuid>) at <hex> failed reading <path>");
    expect(normaliseErrorText("ERROR commit a3f9c2d81b7e not found")).toBe("ERROR commit <hex> not found");
  });
});

describe("unknown error lines in watched logs open incidents", () => {
  let upstream: ScriptedUpstream;
  let harness: Harness;
  const file = "/var/log/app.log";
  const store = () => new IncidentStore(harness.db);
  const unknown = () =>
    store()
      .list({ limit: 50 })
      .filter((i) => i.fingerprint?.startsWith(`log:${file}#`));

  beforeEach(() => {
    upstream = startScriptedUpstream({ models: ["gpt-test"] });
  });
  afterEach(async () => {
    harness.close();
    await upstream.close();
  });

  test("grouped by normalised text, low severity, never worker-restarting; known lines and other files' signatures win", async () => {
    harness = createHarness({
      signatures: [{ id: "app.oom", title: "App out of memory", category: "daemon", regex: "OutOfMemoryError", component: "app" }],
    });
    await harness.watchdog.ingestLine("10:00:01 ERROR payment 4711 failed: upstream 502", file);
    await harness.watchdog.ingestLine("10:00:09 ERROR payment 4712 failed: upstream 503", file);
    await harness.watchdog.ingestLine("panic: runtime error: invalid memory address", file);
    await harness.watchdog.ingestLine("10:00:10 INFO payment 4713 ok", file);
    await harness.watchdog.ingestLine("ERROR java.lang.OutOfMemoryError: Java heap space", file);
    // agentd's own stdout is not a watched log: its lines go through the signatures only.
    await harness.watchdog.ingestLine("ERROR something in the worker");

    const incidents = unknown().sort((a, b) => a.id - b.id);
    expect(incidents.map((i) => [i.count, i.severity])).toEqual([
      [2, "warning"],
      [1, "warning"],
    ]);
    expect(incidents[0]!.title).toStartWith(`Unknown error in ${file}: <n> ERROR payment <n> failed: upstream <n>`);
    expect(incidents[1]!.title).toStartWith(`Unknown error in ${file}: panic: runtime error: invalid memory address`);
    expect(
      store()
        .list({ limit: 50 })
        .filter((i) => i.fingerprint === "app"),
    ).toHaveLength(1);
    expect(harness.restarts).toEqual([]);
    // Low severity: no page for a line nobody described (the configured error signature still alerts).
    expect(harness.events("watchdog.alert").map((a) => a.title)).toEqual(["App out of memory — app"]);
  });

  test("tier 3 sees novel failures; past its rate limit incidents wait their turn instead of being dropped", async () => {
    harness = createHarness({
      resolve_after_s: 600,
      tier3: { enabled: true, model: "gpt-test", base_url: upstream.url, calls_per_minute: 1, allowed_actions: ["alert", "ignore"] },
    });
    const ignore = (why: string) => ({ kind: "text" as const, text: JSON.stringify({ action: "ignore", reason: why, confidence: 0.9 }) });
    upstream.enqueue(ignore("first"), ignore("second"), ignore("third"));
    await harness.watchdog.ingestLine("ERROR cache shard 3 rebuilt from scratch", file);
    await harness.watchdog.ingestLine("CRITICAL replication lag 300s", file);
    await harness.watchdog.ingestLine("FATAL: worker pool exhausted", file);
    expect(upstream.completionRequests()).toHaveLength(1);
    const [first, second, third] = unknown().sort((a, b) => a.id - b.id);
    const untrusted = upstream.completionRequests()[0]!.body.messages[1].content as string;
    expect(untrusted).toContain("ERROR cache shard 3 rebuilt from scratch");
    expect(store().get(first!.id)).toMatchObject({ tier: 3, action: "ignore" });
    for (const waiting of [second!, third!]) {
      expect(store().get(waiting.id).action).toBeNull();
      expect(
        store()
          .timeline(waiting.id)
          .map((e) => e.message),
      ).toContainEqual("waiting for tier 3 (tier 3 not asked: rate limit minute); asked once the limit allows");
    }
    await harness.advance(30_000);
    expect(upstream.completionRequests()).toHaveLength(1);
    await harness.advance(31_000);
    expect(upstream.completionRequests()).toHaveLength(2);
    expect(store().get(second!.id)).toMatchObject({ tier: 3, action: "ignore" });
    expect(store().get(third!.id).action).toBeNull();
    await harness.advance(61_000);
    expect(upstream.completionRequests()).toHaveLength(3);
    expect(store().get(third!.id)).toMatchObject({ tier: 3, action: "ignore" });
    // Waiting was said once per incident, not on every tick.
    expect(
      store()
        .timeline(third!.id)
        .filter((e) => e.kind === "queued"),
    ).toHaveLength(1);
  });
});
