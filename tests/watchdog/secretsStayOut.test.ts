import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { watchdogConfigSchema } from "../../src/core/config/sections/watchdogConfig.ts";
import { CheckScheduler } from "../../src/watchdog/checks/checkScheduler.ts";
import type { Signal } from "../../src/watchdog/checks/signal.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { createHarness, type Harness } from "./watchdogHarness.ts";

// Secrets in what a failing check printed and in a watched log line, redacted by value before they
// reach the page (the check's row), the incident, the alert or the model's request.

const SECRETS = ["HunterTwo99", "T0AAA/B0BBB/XyzXyzXyzXyzXyzXyz", "Tr0ub4dor", "MyS3cretPw", "hdr-secret-value-123"];
// Longer than the 200 characters a check keeps: the URL password sits where the cut would fall.
const SAID = [
  "connect postgres://app:HunterTwo99@db.internal:5432/billing failed",
  "notify https://hooks.slack.com/services/T0AAA/B0BBB/XyzXyzXyzXyzXyzXyz",
  "started as /usr/bin/billing --db-password Tr0ub4dor",
  "mysql -uroot -pMyS3cretPw -h db",
  "webhook header hdr-secret-value-123",
].join("; ");

let upstream: ScriptedUpstream;
let harness: Harness;
beforeEach(() => {
  upstream = startScriptedUpstream({ models: ["gpt-test"] });
});
afterEach(async () => {
  harness?.close();
  await upstream.close();
});

async function failingCheckSignal(): Promise<{ signal: Signal; output: string }> {
  const config = watchdogConfigSchema().parse({
    checks: [{ type: "command", name: "billing", argv: ["/bin/sh", "-c", `echo '${SAID}'; exit 3`], failure_threshold: 1 }],
  });
  const signals: Signal[] = [];
  const context = { workerPid: () => undefined, secrets: ["hdr-secret-value-123"] };
  const scheduler = new CheckScheduler(config.checks, config.flapping, context, (s) => signals.push(s), undefined);
  await scheduler.runOnce("billing");
  return { signal: signals[0]!, output: scheduler.rows()[0]!.output ?? "" };
}

describe("secrets stay out of the page, the incident and the model", () => {
  test("a check keeps the last 200 characters of its output, redacted before the cut", async () => {
    const url = "connect postgres://app:HunterTwo99@db.internal/billing ";
    // 228 characters: the last 200 begin inside the password.
    const said = url + "x".repeat(228 - url.length);
    const config = watchdogConfigSchema().parse({
      checks: [{ type: "command", name: "db", argv: ["/bin/sh", "-c", `printf '%s' '${said}'; exit 1`], failure_threshold: 1 }],
    });
    const scheduler = new CheckScheduler(config.checks, config.flapping, { workerPid: () => undefined }, () => undefined, undefined);
    await scheduler.runOnce("db");
    const output = scheduler.rows()[0]!.output ?? "";
    expect(output).toContain("@db.internal/billing");
    expect(output).not.toContain("Two99");
  });

  test("a failing check's output as the page shows it", async () => {
    const { output, signal } = await failingCheckSignal();
    expect(output).toContain("--db-password [redacted]");
    for (const secret of SECRETS) {
      expect(output).not.toContain(secret);
      expect(signal.line).not.toContain(secret);
    }
  });

  test("the model's request, the incident and the alert hold none of them, nor a configured secret", async () => {
    harness = createHarness({
      checks: [{ type: "command", name: "billing", argv: ["true"] }],
      signatures: [{ id: "billing.fatal", title: "billing FATAL", category: "daemon", severity: "error", regex: "FATAL" }],
      webhook: { url: "http://127.0.0.1:9/hook", headers: { authorization: "hdr-secret-value-123" }, retries: 0 },
      tier3: { enabled: true, model: "gpt-test", base_url: upstream.url, api_key: "sk-test-secret-key-123456", calls_per_minute: 100 },
    });
    upstream.setDefault({ kind: "text", text: JSON.stringify({ action: "alert", reason: "a person must look", confidence: 0.9 }) });
    await harness.watchdog.ingestLine(`FATAL billing: ${SAID}`, "/var/log/billing.log");
    await harness.watchdog.report((await failingCheckSignal()).signal);
    expect(upstream.completionRequests()).toHaveLength(2);
    const store = new IncidentStore(harness.db);
    const stored = store
      .list({ limit: 10 })
      .map((i) => JSON.stringify({ incident: store.get(i.id), timeline: store.timeline(i.id) }))
      .join("\n");
    const sent = upstream
      .completionRequests()
      .map((r) => r.rawBody)
      .join("\n");
    expect(sent).toContain("postgres://app:[redacted]@db.internal");
    for (const secret of SECRETS) {
      expect(sent).not.toContain(secret);
      expect(stored).not.toContain(secret);
      expect(harness.logLines.join("\n")).not.toContain(secret);
    }
  });
});

describe("a check's evidence for verification", () => {
  test("passedSince: only a pass after the given time, with the debounced state ok again", async () => {
    let now = 1_000_000;
    const config = watchdogConfigSchema().parse({
      checks: [{ type: "command", name: "svc", argv: ["false"], failure_threshold: 1, success_threshold: 2 }],
    });
    const scheduler = new CheckScheduler(
      config.checks,
      config.flapping,
      { workerPid: () => undefined },
      () => undefined,
      undefined,
      () => now,
    );
    await scheduler.runOnce("svc");
    expect(scheduler.failing("svc")).toBe(true);
    const actionAt = now;
    // The service is fixed: the same check now runs a command that succeeds.
    (config.checks[0] as { argv: string[] }).argv = ["true"];
    now += 1000;
    await scheduler.runOnce("svc");
    // One pass of the two the debouncer needs: not yet passing again.
    expect(scheduler.passedSince("svc", actionAt)).toBe(false);
    now += 1000;
    await scheduler.runOnce("svc");
    expect(scheduler.passedSince("svc", actionAt)).toBe(true);
    expect(scheduler.passedSince("svc", now)).toBe(false);
    expect(scheduler.passedSince("nope", 0)).toBe(false);
  });
});
