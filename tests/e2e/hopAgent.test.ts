import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startSshd, type TestSshd } from "../support/sshd.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";
import { preinstallAgentd, stopRemoteAgentd } from "../support/remoteAgentd.ts";
import { api, personHeaders, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// The agent working on a hop, end to end: the compiled ./agentd opens a hop to a real sshd (the
// "remote" is this machine under another HOME), copies itself there, and a scripted model hops
// the session over, runs a command and reads a file there, then hops back.

const REMOTE_NOTE = "written only in the remote home\n";

let upstream: ScriptedUpstream;
let sshd: TestSshd;
let daemon: DaemonProcess;
let remoteHome: string;

interface SessionView {
  session: { id: string; state: string; target: string };
  turns: Array<{ status: string; end_reason: string | null }>;
  messages: Array<{ role: string; body: Record<string, any> }>;
  tool_calls: Array<{ tool: string; outcome: string | null }>;
  approvals: Array<{ id: string; tool: string; scope: string; status: string }>;
}

const session = (id: string) => api<SessionView>(daemon.url, `/api/sessions/${id}`);

/** Waits for the session's next pending approval and allows it once. */
async function allowNext(sessionId: string, summary: string): Promise<void> {
  const approval = await waitFor(
    `an approval for ${summary}`,
    async () =>
      (
        await api<{ approvals: Array<{ id: string; session_id: string; scope: string; summary: string }> }>(daemon.url, "/api/approvals")
      ).approvals.find((a) => a.session_id === sessionId),
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  expect(approval.scope).toBe("hop");
  expect(approval.summary).toContain(summary);
  const decided = await api<{ approval: { status: string } }>(daemon.url, `/api/approvals/${approval.id}`, {
    body: { decision: "allow_once" },
  });
  expect(decided.approval.status).toBe("allow_once");
}

beforeAll(async () => {
  await ensureBinary();
  upstream = startScriptedUpstream();
  remoteHome = makeTempDir("agentd-hopagent-remote-");
  // The remote agentd runs as root there, its commands and file tools as its command user: they may read the note.
  chmodSync(remoteHome, 0o755);
  writeFileSync(join(remoteHome, "remote-note.txt"), REMOTE_NOTE, { mode: 0o644 });
  sshd = await startSshd({ env: { HOME: remoteHome } });
  await preinstallAgentd(join(remoteHome, ".agentd"));
  const local = makeTempDir("agentd-hopagent-local-");
  const knownHosts = join(local, "known_hosts");
  writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
  daemon = await startDaemon({
    dataDir: local,
    config: {
      providers: [{ name: "scripted", base_url: upstream.url }],
      agent: { model: "gpt-test" },
      hops: { known_hosts: knownHosts, identity_files: [join(local, "hop_ed25519")], use_agent: false },
    },
  });
  // The key as an operator keeps it for agentd: the worker's own (started as root, the worker runs
  // as the service user and cannot read the test's key). Read at each connection, so in time here.
  const key = join(local, "hop_ed25519");
  copyFileSync(sshd.clientKeyPath, key);
  const worker = statSync(`/proc/${daemon.workerPid()}`);
  chownSync(key, worker.uid, worker.gid);
}, 180_000);

afterAll(async () => {
  await daemon?.stop();
  if (remoteHome) await stopRemoteAgentd(remoteHome);
  await sshd?.stop();
  await upstream?.close();
  removeTempDirs();
}, 120_000);

describe("an agent session on a hop, end to end against ./agentd", () => {
  let hopName = "";

  test("POST /api/hops opens the hop on the running daemon", async () => {
    const response = await fetch(`${daemon.url}/api/hops`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ destination: `${sshd.user}@127.0.0.1:${sshd.port}`, name: "remote" }),
      signal: AbortSignal.timeout(240_000),
    });
    const body = (await response.json()) as { hop: { name: string; state: string; mode: string; remote_dir: string } };
    expect(response.status).toBe(201);
    expect(body.hop).toMatchObject({ name: "remote", state: "connected", mode: "agentd" });
    hopName = body.hop.name;
    expect(existsSync(join(remoteHome, ".agentd", "ready.json"))).toBe(true);
    const listed = await api<{ hops: Array<{ name: string; state: string }> }>(daemon.url, "/api/hops");
    expect(listed.hops.find((h) => h.name === "remote")?.state).toBe("connected");
    // The remote agentd's own gate, read from its /health through the tunnel: it runs as root there.
    const gate = await waitFor(
      "the remote gate in the hop list",
      async () =>
        (await api<{ hops: Array<{ name: string; gate: string | null }> }>(daemon.url, "/api/hops")).hops.find((h) => h.name === "remote")
          ?.gate ?? undefined,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(gate).toBe("command_user");
    // The remote agentd splits (its worker runs as the service user), but the binary root runs stays root's.
    expect(statSync(join(remoteHome, ".agentd", "bin", "agentd")).uid).toBe(0);
    expect(statSync(join(remoteHome, ".agentd", "bin")).uid).toBe(0);
  }, 240_000);

  test("the model hops over (approved), runs a command and reads a file there, then hops back", async () => {
    expect(hopName).toBe("remote");
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "c_hop", name: "hop", arguments: JSON.stringify({ target: "remote" }) }] },
      {
        kind: "text",
        toolCalls: [
          {
            id: "c_exec",
            name: "exec_command",
            arguments: JSON.stringify({ cmd: 'echo "cwd is $(pwd)"' }),
          },
        ],
      },
      {
        kind: "text",
        toolCalls: [{ id: "c_read", name: "read_file", arguments: JSON.stringify({ path: join(remoteHome, "remote-note.txt") }) }],
      },
      { kind: "text", toolCalls: [{ id: "c_back", name: "hop", arguments: JSON.stringify({ target: "local" }) }] },
      { kind: "text", toolCalls: [{ id: "c_local", name: "exec_command", arguments: JSON.stringify({ cmd: 'echo "cwd is $(pwd)"' }) }] },
      { kind: "text", text: "Done on the hop and back." },
    );
    const { id } = await api<{ id: string }>(daemon.url, "/api/sessions", { body: {}, expect: 201 });
    const stream = await fetch(`${daemon.url}/api/sessions/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "work on the remote host" }),
      signal: AbortSignal.timeout(60_000),
    });
    await stream.text();

    await allowNext(id, 'hop {"target":"remote"}');
    await allowNext(id, 'hop {"target":"local"}');
    const view = await waitFor(
      "the turn to end",
      async () => {
        const v = await session(id);
        return v.session.state === "idle" && v.turns[0]?.status === "done" ? v : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    expect(view.turns[0]!.end_reason).toBe("stop");
    expect(view.messages.at(-1)!.body.content).toBe("Done on the hop and back.");
    const results = new Map(
      view.messages.filter((m) => m.role === "tool").map((m) => [m.body.tool_call_id as string, String(m.body.content)]),
    );
    // Ran on the hop: in the remote agentd's working directory (its HOME), as its command user.
    expect(results.get("c_exec")).toContain(`cwd is ${remoteHome}`);
    // The file tool ran there too: only the remote side has the note.
    expect(results.get("c_read")).toContain(REMOTE_NOTE.trim());
    // Back home: the same command runs in the local agentd's directory again.
    expect(results.get("c_local")).toContain(`cwd is ${process.cwd()}`);
    expect(results.get("c_local")).not.toContain(remoteHome);
    expect(view.tool_calls.map((c) => [c.tool, c.outcome])).toEqual([
      ["hop", "ok"],
      ["exec_command", "ok"],
      ["read_file", "ok"],
      ["hop", "ok"],
      ["exec_command", "ok"],
    ]);
    expect(view.approvals.map((a) => [a.tool, a.status])).toEqual([
      ["hop", "allow_once"],
      ["hop", "allow_once"],
    ]);
    expect(view.session.target).toBe("local");
  }, 240_000);

  test("a connected hop is a target by name: /api/sessions and agentd run --on", async () => {
    expect(hopName).toBe("remote");
    const refused = await fetch(`${daemon.url}/api/sessions`, {
      method: "POST",
      headers: personHeaders(daemon.url, { "content-type": "application/json" }),
      body: JSON.stringify({ target: "nosuchhop" }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("unknown_target");
    const created = await api<{ id: string; target: string }>(daemon.url, "/api/sessions", { body: { target: "remote" }, expect: 201 });
    expect(created.target).toBe("remote");

    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "c_on", name: "exec_command", arguments: JSON.stringify({ cmd: 'echo "cwd is $(pwd)"' }) }] },
      { kind: "text", text: "Ran on the hop." },
    );
    const run = await runAgentd(["run", "--data-dir", daemon.dataDir, "--on", "remote", "say where home is"], { timeoutMs: 120_000 });
    expect(run.code).toBe(0);
    const sessionId = /session (\S+)/.exec(run.stderr)?.[1];
    expect(sessionId).toBeDefined();
    const view = await session(sessionId!);
    expect(view.session.target).toBe("remote");
    const result = view.messages.find((m) => m.role === "tool" && m.body.tool_call_id === "c_on");
    expect(String(result?.body.content)).toContain(`cwd is ${remoteHome}`);
  }, 180_000);

  test("/api/pty and agentd exec run on the hop by name", async () => {
    const answer = await api<{ output: string; running: boolean; exit_code: number | null }>(daemon.url, "/api/pty", {
      body: { target: "remote", cmd: 'echo "cwd is $(pwd)"', yield_time_ms: 5000 },
    });
    expect(answer.output).toContain(`cwd is ${remoteHome}`);
    expect(answer).toMatchObject({ running: false, exit_code: 0 });
    const exec = await runAgentd(["exec", "--data-dir", daemon.dataDir, "remote", "--", "sh", "-c", 'echo "hi from $(pwd)"; exit 3'], {
      timeoutMs: 60_000,
    });
    expect(exec.stdout).toContain(`hi from ${remoteHome}`);
    expect(exec.code).toBe(3);
  }, 120_000);

  test("the hop list carries the remote agentd's health and open incidents, read through the tunnel", async () => {
    const row = await waitFor(
      "the remote health in the hop list",
      async () =>
        (
          await api<{ hops: Array<{ name: string; health: string | null; incidents_open: number | null }> }>(daemon.url, "/api/hops")
        ).hops.find((h) => h.name === "remote" && h.health !== null),
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(["pass", "warn"]).toContain(row.health ?? "unknown");
    expect(row.incidents_open).toBe(0);
    const status = await api<{ hops: { rows: Array<{ name: string; health: string | null; incidents_open: number | null }> } }>(
      daemon.url,
      "/status?format=json",
    );
    expect(status.hops.rows.find((h) => h.name === "remote")).toMatchObject({ health: row.health, incidents_open: 0 });
  }, 60_000);

  test("hop --close says the remote agentd keeps running", async () => {
    const closed = await runAgentd(["hop", "--data-dir", daemon.dataDir, "--close", "remote"], { timeoutMs: 60_000 });
    expect(closed.code).toBe(0);
    expect(closed.stdout).toContain("closed hop remote; the remote agentd keeps running");
    const ready = JSON.parse(readFileSync(join(remoteHome, ".agentd", "ready.json"), "utf8")) as { pid: number };
    expect(isProcessAlive(ready.pid)).toBe(true);
  }, 60_000);
});
