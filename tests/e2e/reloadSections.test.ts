import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startSshd, type TestSshd } from "../support/sshd.ts";
import { preinstallAgentd, stopRemoteAgentd } from "../support/remoteAgentd.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";
import { api, parseSseEvents, personHeaders, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// `agentd reload` against the compiled ./agentd: each section's change is applied in place (and the
// running daemon behaves by it) or named as needing a restart. Hop settings apply to the next
// connection, and a hop opened under reloaded settings keeps them across a worker restart, can be
// closed by the name `agentd hops` shows, and takes its remote agentd with it.

let upstream: ScriptedUpstream;
let sshd: TestSshd;
let daemon: DaemonProcess;
let remoteHome: string;
let noHosts: string;
let knownHosts: string;
/** The config file's content, changed test by test. */
let config: Record<string, any>;

const cli = (args: string[]) => runAgentd([args[0]!, "--data-dir", daemon.dataDir, ...args.slice(1)], { timeoutMs: 240_000 });

/** Writes the config and runs `agentd reload`: its exit code and what it printed. */
async function reload(change: (config: Record<string, any>) => void) {
  change(config);
  writeFileSync(daemon.configPath, JSON.stringify(config, null, 2));
  return cli(["reload"]);
}

beforeAll(async () => {
  await ensureBinary();
  upstream = startScriptedUpstream();
  remoteHome = makeTempDir("agentd-reload-remote-");
  sshd = await startSshd({ env: { HOME: remoteHome } });
  await preinstallAgentd(join(remoteHome, ".agentd"));
  const local = makeTempDir("agentd-reload-local-");
  noHosts = join(local, "no_known_hosts");
  writeFileSync(noHosts, "");
  knownHosts = join(local, "known_hosts");
  writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
  config = {
    providers: [{ name: "scripted", base_url: upstream.url }],
    agent: { model: "gpt-test" },
    proxy: { max_attempts: 3, retry_base_ms: 10, retry_max_ms: 20 },
    hops: { known_hosts: noHosts, identity_files: [], use_agent: false },
  };
  daemon = await startDaemon({ dataDir: local, config });
}, 180_000);

afterAll(async () => {
  await daemon?.stop();
  if (remoteHome) await stopRemoteAgentd(remoteHome);
  await sshd?.stop();
  await upstream?.close();
  removeTempDirs();
}, 120_000);

describe("agentd reload, section by section", () => {
  test("nothing changed: it says so", async () => {
    const same = await reload(() => undefined);
    expect(same.stderr).toBe("");
    expect(same.code).toBe(0);
    expect(same.stdout).toBe(`agentd at ${daemon.url} reloaded its config: no setting changed\n`);
  });

  test("proxy: max_attempts applies to the next request; max_body_bytes is named as needing a restart", async () => {
    const failures = () => upstream.completionRequests().length;
    const chat = () =>
      fetch(`${daemon.url}/v1/chat/completions`, {
        method: "POST",
        headers: personHeaders(daemon.url, { "content-type": "application/json" }),
        body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] }),
        signal: AbortSignal.timeout(30_000),
      });
    upstream.setDefault({ kind: "http_error", status: 500, message: "upstream broke" });
    const before = failures();
    expect((await chat()).status).toBeGreaterThanOrEqual(500);
    expect(failures() - before).toBe(3);

    const reloaded = await reload((c) => {
      c.proxy.max_attempts = 1;
      c.proxy.max_body_bytes = 65_536;
    });
    expect(reloaded.code).toBe(0);
    expect(reloaded.stdout).toBe(
      [
        `agentd at ${daemon.url} reloaded its config: 2 settings changed`,
        "  applied:",
        "    proxy.max_attempts",
        "  needs a restart of agentd to apply (until then the old value stays in force):",
        "    proxy.max_body_bytes",
        "",
      ].join("\n"),
    );
    const again = failures();
    expect((await chat()).status).toBeGreaterThanOrEqual(500);
    expect(failures() - again).toBe(1);
    upstream.setDefault({ kind: "text", text: "ok" });
    // Until a restart, /health says which change waits for one.
    const health = await api<{ notes: string[] }>(daemon.url, "/health");
    expect(health.notes).toContain("config changed, needs a restart to apply: proxy.max_body_bytes");
  });

  test("pty: max_sessions applies to the sessions already open", async () => {
    const ptyHealth = async () =>
      (await api<{ checks: Record<string, Array<{ status: string; output?: string }>> }>(daemon.url, "/health")).checks[
        "pty:sessions"
      ]?.[0];
    await api(daemon.url, "/api/pty", { body: { cmd: "sleep 300", yield_time_ms: 100 } });
    expect((await ptyHealth())?.status).toBe("pass");
    const reloaded = await reload((c) => {
      c.pty = { max_sessions: 1 };
    });
    expect(reloaded.code).toBe(0);
    expect(reloaded.stdout).toContain("  applied:\n    pty.max_sessions\n");
    expect(await ptyHealth()).toMatchObject({ status: "warn", output: "1 of at most 1 PTY sessions are open" });
    await reload((c) => {
      delete c.pty;
    });
    expect((await ptyHealth())?.status).toBe("pass");
  });

  test("approvals: a rule added by a reload decides the next tool call", async () => {
    const { id } = await api<{ id: string }>(daemon.url, "/api/sessions", { body: {}, expect: 201 });
    const turn = async (cmd: string) => {
      upstream.enqueue(
        { kind: "text", toolCalls: [{ name: "exec_command", arguments: JSON.stringify({ cmd }) }] },
        { kind: "text", text: "done" },
      );
      const response = await fetch(`${daemon.url}/api/sessions/${id}/messages`, {
        method: "POST",
        headers: personHeaders(daemon.url, { "content-type": "application/json" }),
        body: JSON.stringify({ content: `run ${cmd}` }),
        signal: AbortSignal.timeout(60_000),
      });
      expect(response.status).toBe(200);
      return parseSseEvents(await response.text()).find((e) => e.type === "tool.end")?.data;
    };
    expect(await turn("echo reload-gate-1")).toMatchObject({ tool: "exec_command", outcome: "ok" });
    const reloaded = await reload((c) => {
      c.approvals = { rules: [{ match: "*reload-gate*", action: "deny" }] };
    });
    expect(reloaded.code).toBe(0);
    expect(reloaded.stdout).toContain("  applied:\n    approvals.rules\n");
    expect(await turn("echo reload-gate-2")).toMatchObject({ tool: "exec_command", outcome: "denied" });
  });

  test("services and agent.model are named as needing a restart, not called reloaded", async () => {
    const reloaded = await reload((c) => {
      c.agent.model = "gpt-other";
      c.services = [{ name: "web", status: "true", restart: "true" }];
    });
    expect(reloaded.code).toBe(0);
    expect(reloaded.stdout).toContain(
      "needs a restart of agentd to apply (until then the old value stays in force):\n    agent.model\n    services\n",
    );
    // Set back: in force again, and the note goes.
    const back = await reload((c) => {
      c.agent.model = "gpt-test";
      delete c.services;
    });
    expect(back.stdout).toContain("  applied:\n    agent.model\n    services\n");
  });

  test("hops: known_hosts and identity_files apply to the next hop; it survives a worker restart and closes by its name", async () => {
    const open = () =>
      fetch(`${daemon.url}/api/hops`, {
        method: "POST",
        headers: personHeaders(daemon.url, { "content-type": "application/json" }),
        body: JSON.stringify({ destination: `${sshd.user}@127.0.0.1:${sshd.port}`, name: "remote" }),
        signal: AbortSignal.timeout(240_000),
      });
    const code = async (response: Response) => ((await response.json()) as { error?: { code?: string } }).error?.code;
    expect(await code(await open())).toBe("hop_host_unknown");

    const keys = await reload((c) => {
      c.hops.known_hosts = knownHosts;
    });
    expect(keys.stdout).toContain("  applied:\n    hops.known_hosts\n");
    // The host is known now: it gets as far as authenticating, with no key to offer.
    expect(await code(await open())).toBe("hop_auth_failed");

    // The key as an operator would keep it for agentd: readable by the worker's user alone (started
    // as root, the worker runs as the service user and cannot read the test's own key).
    const key = join(daemon.dataDir, "hop_ed25519");
    copyFileSync(sshd.clientKeyPath, key);
    const worker = statSync(`/proc/${daemon.workerPid()}`);
    chownSync(key, worker.uid, worker.gid);
    const identity = await reload((c) => {
      c.hops.identity_files = [key];
    });
    expect(identity.stdout).toContain("  applied:\n    hops.identity_files\n");
    const opened = await open();
    expect({ status: opened.status, body: await opened.json() }).toMatchObject({ status: 201, body: { hop: { state: "connected" } } });

    // A new worker gets the reloaded settings from the supervisor: the hop comes back with the same
    // host key and identity, without "host key not known".
    await daemon.killWorker();
    const hops = async () =>
      (await api<{ hops: Array<{ name: string; state: string; last_error: string | null }> }>(daemon.url, "/api/hops")).hops;
    const back = await waitFor(
      "the hop to reconnect",
      async () => (await hops()).find((h) => h.name === "remote" && h.state === "connected"),
      {
        timeoutMs: 120_000,
        intervalMs: 200,
      },
    );
    expect(back.last_error).toBeNull();

    const readyPath = join(remoteHome, ".agentd", "ready.json");
    expect(existsSync(readyPath)).toBe(true);
    const ready = JSON.parse(readFileSync(readyPath, "utf8")) as { pid: number; supervisor_pid: number | null };
    const remotePids = [ready.pid, ready.supervisor_pid].filter((pid): pid is number => typeof pid === "number");

    // The host key stops being known (known_hosts swapped by a reload) and the worker restarts: the
    // hop cannot come back and closes, its incident named after it, its remote agentd still running.
    await reload((c) => {
      c.hops.known_hosts = noHosts;
    });
    await daemon.killWorker();
    const failed = await waitFor("the hop to close", async () => (await hops()).find((h) => h.name === "remote" && h.state === "closed"), {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    expect(failed.last_error).toContain("is not known");
    const incidents = async () => JSON.stringify(await api(daemon.url, "/api/incidents?limit=500"));
    await waitFor("the hop's incident", async () => (await incidents()).includes("hop:remote"), { timeoutMs: 60_000, intervalMs: 200 });
    expect(await incidents()).not.toContain("hop:unknown");
    expect(remotePids.every(isProcessAlive)).toBe(true);

    // Another restart: the closed hop is only on record now, and `hops` still lists it by name.
    await daemon.killWorker();
    const listed = await cli(["hops"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/remote\s.*closed/);

    // With the key known again, the name `hops` shows closes it and stops the agentd left there.
    await reload((c) => {
      c.hops.known_hosts = knownHosts;
    });
    const closed = await cli(["hop", "--close", "remote", "--stop-remote"]);
    expect(closed.stderr).toBe("");
    expect(closed.stdout).toContain("closed hop remote");
    expect(closed.code).toBe(0);
    await waitFor("the remote agentd to stop", () => remotePids.every((pid) => !isProcessAlive(pid)), { timeoutMs: 30_000 });
    expect((await hops()).find((h) => h.name === "remote")?.state).toBe("closed");
  }, 300_000);
});
