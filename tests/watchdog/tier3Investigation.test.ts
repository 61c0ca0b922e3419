import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { createHarness, type Harness } from "./watchdogHarness.ts";

let upstream: ScriptedUpstream;
let harness: Harness;

// The check prints a URL with a password: it must reach neither the model nor the timeline.
const checkArgv = ["sh", "-c", "echo 'db unreachable: postgres://app:HunterTwo99@127.0.0.1:5/app'; exit 1"];
/** The check's command as the model saw it (redacted): naming it so runs the command as configured. */
const checkArgvShown = ["sh", "-c", "echo 'db unreachable: postgres://app:[redacted]@127.0.0.1:5/app'; exit 1"];

function setup(investigate: Record<string, unknown> = {}) {
  harness = createHarness({
    checks: [{ type: "command", name: "app", argv: checkArgv }],
    tier3: {
      enabled: true,
      model: "gpt-test",
      base_url: upstream.url,
      api_key: "sk-test-secret-key-123456",
      calls_per_minute: 100,
      allowed_actions: ["alert", "ignore"],
      investigate,
    },
  });
}

const failing = () =>
  harness.watchdog.report({
    id: "check.command",
    title: "Check app failing",
    category: "daemon",
    severity: "error",
    component: "check:app",
    ts: harness.clock.now,
    fields: { check: "app" },
    line: "exit 1, expected 0: db unreachable: postgres://app:HunterTwo99@127.0.0.1:5/app",
  });

const asks = (...argvs: string[][]) => ({
  kind: "text" as const,
  toolCalls: argvs.map((argv) => ({ name: "run_diagnostic", arguments: JSON.stringify({ argv }) })),
  usage: { prompt_tokens: 100, completion_tokens: 10 },
});
const decides = {
  kind: "text" as const,
  text: JSON.stringify({
    action: "alert",
    reason: "the app cannot reach its database; a person must start it",
    confidence: 0.9,
    evidence: "the check prints db unreachable; df shows free space",
    hypothesis: "the database on 127.0.0.1:5 is down",
  }),
  usage: { prompt_tokens: 200, completion_tokens: 30 },
};

const incident = () => new IncidentStore(harness.db).list({ limit: 10 }).find((i) => i.fingerprint === "check:app")!;
const timeline = () => new IncidentStore(harness.db).timeline(incident().id);
const toolResults = (i: number) =>
  (upstream.completionRequests()[i]!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "tool");

beforeEach(() => {
  upstream = startScriptedUpstream({ models: ["gpt-test"] });
});
afterEach(async () => {
  harness.close();
  await upstream.close();
});

describe("tier 3 investigates before it proposes", () => {
  test("runs the diagnostics it asks for, refuses the others, and writes its diagnosis on the incident", async () => {
    setup();
    // An earlier incident on the host: told to the model as related.
    new IncidentStore(harness.db).open({
      fingerprint: "check:db",
      pattern: "check.tcp",
      title: "Check db failing",
      category: "daemon",
      severity: "error",
      now: harness.clock.now - 60_000,
    });
    upstream.enqueue(asks(["df", "-h", "/"]), asks(checkArgvShown, ["systemctl", "restart", "app"], ["rm", "-rf", "/tmp/x"]), decides);
    await failing();

    const requests = upstream.completionRequests();
    expect(requests).toHaveLength(3);
    // What it was told: the check as configured, its output, host facts; never the password.
    const first = requests[0]!.body;
    expect(first.tools[0].function.name).toBe("run_diagnostic");
    const told = first.messages[1].content as string;
    expect(told).toContain('"type": "command"');
    expect(told).toContain('"hostname"');
    expect(told).toContain('"load"');
    expect(told).toContain("check_output");
    expect(told).toMatch(/"related": \[\s*\{\s*"id": 1,\s*"title": "Check db failing",\s*"component": "check:db"/);
    for (const request of requests) expect(JSON.stringify(request.body)).not.toContain("HunterTwo99");

    // df ran for real (as the command user), the check's own command too; the rest was refused.
    expect(toolResults(1)[0]!.content).toContain("Filesystem");
    // The third request repeats the first round; the second round's results follow it.
    const second = toolResults(2)
      .slice(1)
      .map((m) => JSON.parse(m.content));
    expect(second[0]).toMatchObject({ exit_code: 1 });
    expect(second[0].output).toContain("db unreachable");
    expect(second[1].refused).toContain("changes state");
    expect(second[2].refused).toContain("not a read-only diagnostic");

    const words = timeline().map((e) => `${e.kind}: ${e.message}`);
    expect(words.filter((w) => w.startsWith("diagnostic:"))).toEqual([
      expect.stringMatching(/^diagnostic: ran `df -h \/` \(exit 0\): Filesystem/),
      expect.stringMatching(/^diagnostic: ran `sh -c echo 'db unreachable: .*` \(exit 1\): db unreachable/),
      expect.stringContaining("refused `systemctl restart app`: systemctl restart changes state"),
      expect.stringContaining("refused `rm -rf /tmp/x`"),
    ]);
    expect(words).toContainEqual(
      "diagnosis: evidence: the check prints db unreachable; df shows free space; hypothesis: the database on 127.0.0.1:5 is down; proposed: alert (confidence 0.9)",
    );
    expect(JSON.stringify(timeline())).not.toContain("HunterTwo99");
    expect(incident()).toMatchObject({ tier: 3, action: "alert", details: { model_hypothesis: "the database on 127.0.0.1:5 is down" } });
  });

  test("past the budget of calls the model is asked without tools and must decide", async () => {
    setup({ max_calls: 1 });
    upstream.enqueue(asks(["df"], ["df", "-h"]), decides);
    await failing();
    const requests = upstream.completionRequests();
    expect(requests).toHaveLength(2);
    expect(requests[1]!.body.tools).toBeUndefined();
    expect(toolResults(1).map((m) => JSON.parse(m.content).refused)).toEqual([undefined, "the diagnostic budget is spent"]);
    expect(incident()).toMatchObject({ tier: 3, action: "alert" });
  });

  test("a diagnostic that outlives the seconds budget is stopped at its deadline", async () => {
    harness = createHarness({
      checks: [{ type: "command", name: "app", argv: ["sleep", "30"] }],
      tier3: {
        enabled: true,
        model: "gpt-test",
        base_url: upstream.url,
        calls_per_minute: 100,
        allowed_actions: ["alert", "ignore"],
        investigate: { max_seconds: 0.5 },
      },
    });
    upstream.enqueue(asks(["sleep", "30"]), decides);
    await failing();
    expect(JSON.parse(toolResults(1)[0]!.content)).toMatchObject({ note: "stopped at the budget's deadline" });
    expect(upstream.completionRequests()[1]!.body.tools).toBeUndefined();
  });

  test("a model that keeps asking once tools are gone gets no action: its empty answer is refused and recorded", async () => {
    setup({ max_calls: 0 });
    upstream.enqueue(asks(["df"]));
    await failing();
    expect(upstream.completionRequests()[0]!.body.tools).toBeUndefined();
    expect(incident()).toMatchObject({ action: "alert", details: { tier3_refusal: "invalid_answer" } });
    expect(timeline().some((e) => e.kind === "diagnostic")).toBe(false);
  });
});
