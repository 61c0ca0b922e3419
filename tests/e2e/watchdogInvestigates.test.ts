import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// Through the compiled ./agentd with a scripted model: a failing command check makes tier 3 run
// diagnostics (as the command user) before it proposes, and writes its diagnosis on the incident;
// an error line no signature knows, in a watched log, opens its own low-severity incident that
// tier 3 is asked about.

interface IncidentView {
  id: number;
  fingerprint: string;
  severity: string;
  tier: number | null;
  action: string | null;
  details: Record<string, unknown>;
}
interface Shown {
  incident: IncidentView;
  timeline: Array<{ kind: string; message: string }>;
}

let daemon: DaemonProcess | undefined;
let upstream: ScriptedUpstream | undefined;

afterEach(async () => {
  await daemon?.stop();
  await upstream?.close();
  daemon = upstream = undefined;
}, 60_000);
afterAll(removeTempDirs);

const asks = (...argvs: string[][]) => ({
  kind: "text" as const,
  toolCalls: argvs.map((argv) => ({ name: "run_diagnostic", arguments: JSON.stringify({ argv }) })),
});
const decides = (action: string, hypothesis: string) => ({
  kind: "text" as const,
  text: JSON.stringify({ action, reason: `chose ${action}`, confidence: 0.9, evidence: "what the diagnostics printed", hypothesis }),
});

describe("tier 3 investigates, end to end against ./agentd", () => {
  test("diagnostics run as the command user and the diagnosis is on the incident; a novel error line opens its own incident", async () => {
    await ensureBinary();
    upstream = startScriptedUpstream({ models: ["gpt-test"] });
    const home = makeTempDir("agentd-wd-investigate-");
    const dataDir = join(home, "data");
    mkdirSync(dataDir);
    const logFile = join(home, "app.log");
    writeFileSync(logFile, "");
    const checkArgv = ["sh", "-c", 'echo "app down, checked as $(id -un)"; exit 1'];
    upstream.enqueue(asks(checkArgv, ["df", "-h", "/"], ["systemctl", "stop", "app"]), decides("alert", "the app is down"));
    daemon = await startDaemon({
      dataDir,
      config: {
        watchdog: {
          tick_ms: 100,
          resolve_after_s: 3600,
          log_files: [{ path: logFile, poll_ms: 100 }],
          checks: [{ type: "command", name: "app", argv: checkArgv, interval_s: 0.2, failure_threshold: 1, success_threshold: 1 }],
          tier3: {
            enabled: true,
            model: "gpt-test",
            base_url: upstream.url,
            calls_per_minute: 100,
            allowed_actions: ["alert", "ignore"],
          },
        },
      },
    });
    const url = daemon.url;
    const incidentOf = async (match: (i: IncidentView) => boolean) =>
      (await api<{ incidents: IncidentView[] }>(url, "/api/incidents?state=unresolved&limit=500")).incidents.find(match);
    const decided = (match: (i: IncidentView) => boolean) =>
      waitFor("tier 3's decision", async () => ((await incidentOf(match))?.tier === 3 ? incidentOf(match) : undefined), {
        timeoutMs: 60_000,
        intervalMs: 100,
      });

    const check = (await decided((i) => i.fingerprint === "check:app"))!;
    expect(check).toMatchObject({ action: "alert", details: { model_hypothesis: "the app is down" } });
    const shown = await api<Shown>(url, `/api/incidents/${check.id}`);
    const words = shown.timeline.map((e) => `${e.kind}: ${e.message}`);
    // Started as root, diagnostics run as the command user, never as root.
    const commandUser = process.getuid?.() === 0 ? "agentd-cmd" : undefined;
    const ranCheck = words.find((w) => w.startsWith("diagnostic: ran `sh -c"));
    expect(ranCheck).toMatch(/\(exit 1\): app down, checked as \S+$/);
    if (commandUser) expect(ranCheck).toEndWith(`checked as ${commandUser}`);
    expect(words).toContainEqual(expect.stringMatching(/^diagnostic: ran `df -h \/` \(exit 0\): Filesystem/));
    expect(words).toContainEqual(expect.stringContaining("diagnostic: refused `systemctl stop app`: systemctl stop changes state"));
    expect(words).toContainEqual(
      "diagnosis: evidence: what the diagnostics printed; hypothesis: the app is down; proposed: alert (confidence 0.9)",
    );
    const told = upstream.completionRequests()[0]!.body.messages[1].content as string;
    expect(told).toContain('"hostname"');
    expect(told).toContain('"name": "app"');

    // A line no signature describes, in the watched log.
    upstream.enqueue(decides("ignore", "a cache rebuild is routine"));
    appendFileSync(logFile, "2026-11-26 10:00:01 ERROR cache shard 7 rebuilt from scratch after 0x3f errors\n");
    const novel = (await decided((i) => i.fingerprint.startsWith(`log:${logFile}#`)))!;
    expect(novel).toMatchObject({ severity: "warning", action: "ignore" });
    const asked = JSON.stringify(upstream.completionRequests().at(-1)!.body.messages);
    expect(asked).toContain("ERROR cache shard 7 rebuilt from scratch");
  }, 180_000);
});
