import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHopManager, hopMigrations, hopsConfigSchema, type HopManager, type HopsConfig } from "../../src/hop/index.ts";
import { baseMigrations, openStore, type Database } from "../../src/core/store/index.ts";
import type { Subprocess } from "bun";
import type { Logger } from "../../src/core/log/index.ts";
import { cleanEnv, ensureBinary, stopChild } from "../support/binary.ts";
import { startSshd, type TestSshd } from "../support/sshd.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";
import { stopRemoteAgentd } from "../support/remoteAgentd.ts";

/** A logger that keeps every line, to prove the remote token never reaches one. */
function recordingLogger(lines: string[], component = "hop"): Logger {
  const write = (level: string) => (event: string, fields?: Record<string, unknown>) =>
    void lines.push(JSON.stringify({ level, component, event, ...fields }));
  return {
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    child: (sub) => recordingLogger(lines, `${component}.${sub}`),
  };
}

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("hops against a real OpenSSH server", () => {
  let binary: string;
  let target: TestSshd;
  let remoteHome: string;
  let shared: string;
  let knownHosts: string;
  let local: string;
  let config: HopsConfig;
  let db: Database;
  let manager: HopManager;
  const homes: string[] = [];
  const servers: TestSshd[] = [];
  const logLines: string[] = [];
  /** Whether a `memory.code_released` line names `work` among what it followed. */
  const releasedAfter = (work: string) =>
    logLines.some((line) => {
      const record = JSON.parse(line) as { event: string; after?: string[] };
      return record.event === "memory.code_released" && record.after?.includes(work) === true;
    });
  /** agentds a test started itself on the "remote" side (as an older hop would have left them). */
  const legacyDaemons: Subprocess[] = [];
  let dest: string;
  const remoteToken = () => readFileSync(join(remoteHome, ".agentd", "token"), "utf8").trim();
  const newManager = () => createHopManager({ db, dataDir: local, config, selfBinaryPath: binary, logger: recordingLogger(logLines) });

  const open = (extra: Record<string, unknown> = {}) =>
    manager.open({ destination: dest, identity: target.clientKeyPath, name: "t", ...extra });

  beforeAll(async () => {
    binary = await ensureBinary();
    remoteHome = makeTempDir("agentd-hop-remote-");
    homes.push(remoteHome);
    shared = makeTempDir("agentd-hop-shared-");
    chmodSync(shared, 0o777);
    target = await startSshd({ env: { HOME: remoteHome } });
    servers.push(target);
    dest = `${target.user}@127.0.0.1:${target.port}`;
    local = makeTempDir("agentd-hop-local-");
    knownHosts = join(local, "ssh", "known_hosts");
    db = openStore({ path: join(local, "agentd.db"), migrations: [...baseMigrations, ...hopMigrations] });
    config = hopsConfigSchema().parse({
      known_hosts: knownHosts,
      identity_files: [],
      use_agent: false,
      reconnect_initial_ms: 100,
      reconnect_max_ms: 1000,
      keepalive_interval_ms: 2000,
    });
    manager = newManager();
  }, 180_000);

  afterAll(async () => {
    await manager?.close();
    for (const legacy of legacyDaemons) await stopChild(legacy);
    for (const home of homes) await stopRemoteAgentd(home);
    for (const server of servers) await server.stop();
    db?.close();
    removeTempDirs();
  }, 120_000);

  test("an unknown host is refused with its fingerprint and how to accept it", async () => {
    const error = (await open().catch((e: unknown) => e)) as { code: string; message: string };
    expect(error.code).toBe("hop_host_unknown");
    expect(error.message).toContain("SHA256:");
    expect(error.message).toContain("--accept-new");
    expect(existsSync(knownHosts)).toBe(false);
    expect(manager.get("t").state).toBe("closed");
  }, 60_000);

  test("a known_hosts agentd cannot read is refused by name, not called an unknown host to accept", async () => {
    // A directory stands for a file agentd may not read (root reads any file it is given).
    const unreadable = makeTempDir("agentd-hop-unreadable-");
    // Its own store: the hops the later tests count are this suite's manager's.
    const otherDb = openStore({ path: join(unreadable, "agentd.db"), migrations: [...baseMigrations, ...hopMigrations] });
    const other = createHopManager({
      db: otherDb,
      dataDir: local,
      config: { ...config, known_hosts: unreadable },
      selfBinaryPath: binary,
      logger: recordingLogger(logLines),
    });
    const error = (await other
      .open({ destination: dest, identity: target.clientKeyPath, name: "unreadable", accept_new: true })
      .catch((e: unknown) => e)) as { code: string; message: string };
    await other.close();
    otherDb.close();
    expect(error.code).toBe("hop_host_unknown");
    expect(error.message).toContain(`Cannot read ${unreadable} (EISDIR)`);
    expect(error.message).toContain("hops.known_hosts");
    expect(error.message).not.toContain("--accept-new");
  }, 60_000);

  test("--accept-new adds the key; the first hop uploads, verifies and starts agentd there", async () => {
    const steps = new Set<string>();
    const hop = await manager.open({ destination: dest, identity: target.clientKeyPath, name: "t", accept_new: true }, (event) =>
      steps.add(event.step),
    );
    expect(readFileSync(knownHosts, "utf8")).toContain(target.knownHostsLine);
    expect(hop.state).toBe("connected");
    expect(hop.mode).toBe("agentd");
    expect(hop.upload?.uploaded).toBe(true);
    expect(hop.upload?.verified).toBe("sha256");
    expect(hop.upload!.wire_bytes).toBeLessThan(hop.upload!.binary_bytes);
    expect(sha256(join(remoteHome, ".agentd", "bin", "agentd"))).toBe(sha256(binary));
    const ready = JSON.parse(readFileSync(join(remoteHome, ".agentd", "ready.json"), "utf8")) as { version: string };
    expect(hop.remote_version).toBe(ready.version);
    expect(manager.list().find((h) => h.name === "t")?.state).toBe("connected");
    expect([...steps]).toEqual(["connect", "probe", "upload", "start", "tunnel", "ready"]);
    // Hashing, compressing and uploading the binary ran code this process may never run again: released.
    await waitFor("the code release after the hop", () => releasedAfter("hop.connected"));
  }, 180_000);

  test("the remote agentd requires its token even on loopback: through the tunnel port nothing runs without it", async () => {
    const url = manager.get("t").tunnel_url!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const tokenPath = join(remoteHome, ".agentd", "token");
    expect(statSync(tokenPath).mode & 0o777).toBe(0o600);
    const token = remoteToken();
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    const marker = join(remoteHome, "driven-without-token");
    const attempt = (headers: Record<string, string>) =>
      fetch(`${url}/api/pty`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ cmd: `touch ${marker}`, yield_time_ms: 2000 }),
      });
    const refused = await attempt({});
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    expect((await attempt({ authorization: "Bearer not-the-token-at-all" })).status).toBe(401);
    expect((await fetch(`${url}/api/pty`)).status).toBe(401);
    expect(existsSync(marker)).toBe(false);
    const listed = await fetch(`${url}/api/pty`, { headers: { authorization: `Bearer ${token}` } });
    expect(listed.status).toBe(200);
    // The token stays in the hop's memory: not in a log line, a stored row or what the API shows.
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.filter((line) => line.includes(token))).toEqual([]);
    expect(JSON.stringify(db.query("SELECT * FROM hops").all())).not.toContain(token);
    expect(JSON.stringify(manager.list())).not.toContain(token);
  }, 60_000);

  test("exec_command runs on the hop, in the remote agentd's directory; the remote agentd's own files stay out of reach", async () => {
    const client = manager.client("t");
    // The remote agentd runs as root there: its commands and file tools act as its command user.
    const result = await client.exec({ cmd: 'echo "cwd $(pwd)"; echo "answer $((6*7))"', yield_time_ms: 10_000 });
    expect(result.output).toContain("answer 42");
    expect(result.output).toContain(`cwd ${remoteHome}`);
    expect(result.exit_code).toBe(0);
    const note = join(shared, "hop-note.txt");
    const written = await client.writeFile({ path: note, content: "from the hop\n" });
    expect(written.path).toBe(note);
    const read = await client.readFile({ path: note });
    expect(read).toMatchObject({ content: "from the hop\n", encoding: "utf8", truncated: false });
    // The remote agentd's data dir holds its token and store: its file API refuses it.
    await expect(client.readFile({ path: join(remoteHome, ".agentd", "token") })).rejects.toMatchObject({
      code: expect.stringMatching(/^(path_protected|file_permission_denied)$/),
    });
  }, 60_000);

  let pythonSession = "";

  test("python3 -i in a remote PTY answers through write_stdin", async () => {
    const client = manager.client("t");
    const started = await client.exec({ cmd: "python3 -i -q", yield_time_ms: 1000 });
    expect(started.running).toBe(true);
    pythonSession = started.session_id!;
    let seen = "";
    await client.writeStdin({ session_id: pythonSession, chars: "print(6 * 7)\n", yield_time_ms: 500 }).then((r) => (seen += r.output));
    await waitFor("python's answer", async () => {
      if (/\b42\b/.test(seen)) return true;
      seen += (await client.writeStdin({ session_id: pythonSession, chars: "", yield_time_ms: 500 })).output;
      return /\b42\b/.test(seen);
    });
  }, 60_000);

  test("a worker restart brings the hop back without uploading, its remote PTY session still there; a hop the user closed stays closed", async () => {
    await manager.open({ destination: dest, identity: target.clientKeyPath, name: "gone" });
    await manager.closeHop("gone");
    // What the worker does at a clean stop (SIGTERM): tunnels end, the hops stay recorded as open.
    await manager.close();
    const rows = db
      .query<{ name: string; state: string; identity: string | null }, []>("SELECT name, state, identity FROM hops ORDER BY name")
      .all();
    expect(rows).toEqual([
      { name: "gone", state: "closed", identity: target.clientKeyPath },
      { name: "t", state: "connected", identity: target.clientKeyPath },
    ]);

    manager = newManager();
    expect(manager.get("t").state).toBe("reconnecting");
    expect(manager.get("gone").state).toBe("closed");
    await waitFor("the hop to come back", () => manager.get("t").state === "connected", { timeoutMs: 90_000 });
    const hop = manager.get("t");
    expect(hop.mode).toBe("agentd");
    expect(hop.upload).toMatchObject({ uploaded: false, wire_bytes: 0 });
    expect((await manager.client("t").listSessions()).map((s) => s.id)).toContain(pythonSession);
    let seen = "";
    await waitFor("python to answer after the restart", async () => {
      seen += (await manager.client("t").writeStdin({ session_id: pythonSession, chars: seen ? "" : "print(6 * 8)\n", yield_time_ms: 500 }))
        .output;
      return /\b48\b/.test(seen);
    });
    expect(manager.get("gone").state).toBe("closed");
    expect(() => manager.client("gone")).toThrow(expect.objectContaining({ code: "hop_not_found" }));
  }, 150_000);

  test("sshd killed mid-command: a clear error, reconnect after restart, the remote session survives", async () => {
    const client = manager.client("t");
    const inFlight = client.exec({ cmd: "sleep 60", yield_time_ms: 25_000 }).then(
      () => ({ code: "resolved" }),
      (error: { code: string; message: string }) => error,
    );
    // The command is running on the remote before the server goes away.
    await waitFor("the sleep to start", async () => (await client.listSessions()).some((s) => s.cmd === "sleep 60"));
    await target.kill();
    const failure = await inFlight;
    expect(failure.code).toBe("hop_disconnected");
    await waitFor("state reconnecting", () => manager.get("t").state === "reconnecting");
    const during = await manager
      .client("t")
      .listSessions()
      .catch((e: { code: string }) => e.code);
    expect(during).toBe("hop_disconnected");
    await target.restart();
    await waitFor("state connected", () => manager.get("t").state === "connected", { timeoutMs: 60_000 });
    const sessions = await manager.client("t").listSessions();
    expect(sessions.map((s) => s.id)).toContain(pythonSession);
    let seen = "";
    await waitFor("python still answers", async () => {
      seen += (
        await manager.client("t").writeStdin({ session_id: pythonSession, chars: seen ? "" : "print(7 * 6 + 1)\n", yield_time_ms: 500 })
      ).output;
      return /\b43\b/.test(seen);
    });
  }, 120_000);

  test("a second hop to the same host uploads nothing and reuses the remote agentd", async () => {
    await manager.closeHop("t");
    expect(manager.get("t").state).toBe("closed");
    const hop = await open();
    expect(hop.state).toBe("connected");
    expect(hop.upload?.uploaded).toBe(false);
    expect(hop.upload?.wire_bytes).toBe(0);
    expect((await manager.client("t").exec({ cmd: "echo again", yield_time_ms: 5000 })).output).toContain("again");
  }, 120_000);

  test("a remote agentd that does not require the token is restarted with --require-token; one that refuses the hop's token too", async () => {
    const dataDir = join(remoteHome, ".agentd");
    const readReady = () =>
      JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as { pid: number; supervisor_pid: number | null; url: string };
    await manager.closeHop("t");
    await stopRemoteAgentd(remoteHome);
    // As a hop before this change left it: loopback, no token file, no --require-token.
    rmSync(join(dataDir, "token"), { force: true });
    const legacy = Bun.spawn([binary, "serve", "--bind", "127.0.0.1", "--port", "0", "--data-dir", dataDir], {
      cwd: remoteHome,
      env: cleanEnv({ HOME: remoteHome }),
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    legacyDaemons.push(legacy);
    await waitFor(
      "the legacy remote agentd",
      () => existsSync(join(dataDir, "ready.json")) && readReady().supervisor_pid === legacy.pid && isProcessAlive(readReady().pid),
      { timeoutMs: 60_000 },
    );
    // Started as root it keeps a token for decisions, but the legacy one serves /api/pty without it.
    expect((await fetch(`${readReady().url}/api/pty`)).status).toBe(200);

    const hop = await open();
    expect(hop.state).toBe("connected");
    expect(await legacy.exited).toBeDefined();
    expect(readReady().supervisor_pid).not.toBe(legacy.pid);
    expect(logLines.some((line) => line.includes('"hop.remote_restarting"'))).toBe(true);
    expect((await fetch(`${hop.tunnel_url}/api/pty`)).status).toBe(401);
    expect((await manager.client("t").exec({ cmd: "echo guarded", yield_time_ms: 5000 })).output).toContain("guarded");

    // The token file replaced under a running agentd: it refuses the token the hop reads, so the hop restarts it.
    await manager.closeHop("t");
    const before = readReady().supervisor_pid;
    writeFileSync(join(dataDir, "token"), "replaced-token-0123456789abcdef\n", { mode: 0o600 });
    const again = await open();
    expect(again.state).toBe("connected");
    expect(readReady().supervisor_pid).not.toBe(before);
    expect((await manager.client("t").exec({ cmd: "echo guarded again", yield_time_ms: 5000 })).output).toContain("guarded again");
    expect(logLines.filter((line) => line.includes(remoteToken()))).toEqual([]);
  }, 180_000);

  test("a jump chain of two reaches the target, and losing a jump host drops the hop", async () => {
    // Every server trusts the target's test key, so one --identity serves the whole chain.
    const jump1 = await startSshd({ authorizedKeys: [target.clientPublicKey] });
    const jump2 = await startSshd({ authorizedKeys: [target.clientPublicKey] });
    servers.push(jump1, jump2);
    const hop = await manager.open({
      destination: dest,
      via: [`${jump1.user}@127.0.0.1:${jump1.port}`, `${jump2.user}@127.0.0.1:${jump2.port}`],
      identity: target.clientKeyPath,
      accept_new: true,
      name: "jumped",
    });
    expect(hop.chain).toEqual([`${jump1.user}@127.0.0.1:${jump1.port}`, `${jump2.user}@127.0.0.1:${jump2.port}`, dest]);
    expect(hop.state).toBe("connected");
    expect((await manager.client("jumped").exec({ cmd: "echo through-jumps", yield_time_ms: 5000 })).output).toContain("through-jumps");
    await jump2.kill();
    await waitFor("the jumped hop to notice", () => manager.get("jumped").state === "reconnecting");
    expect(manager.get("t").state).toBe("connected");
    await manager.closeHop("jumped");
  }, 120_000);

  test("a changed host key is refused loudly, even with --accept-new", async () => {
    await manager.closeHop("t");
    const before = readFileSync(knownHosts, "utf8");
    await target.regenerateHostKey();
    const error = (await open({ accept_new: true }).catch((e: unknown) => e)) as { code: string; message: string };
    expect(error.code).toBe("hop_host_key_changed");
    expect(error.message).toContain("HAS CHANGED");
    expect(error.message).toContain("ssh-keygen -R");
    expect(readFileSync(knownHosts, "utf8")).toBe(before);
  }, 60_000);

  test("fallback mode when the remote binary cannot run: SSH exec with a pty still serves the tools", async () => {
    const home = makeTempDir("agentd-hop-fallback-");
    homes.push(home);
    // The same bytes (so nothing is uploaded) without an execute bit: even root cannot run it.
    mkdirSync(join(home, ".agentd", "bin"), { recursive: true });
    copyFileSync(binary, join(home, ".agentd", "bin", "agentd"));
    chmodSync(join(home, ".agentd", "bin", "agentd"), 0o644);
    const server = await startSshd({ env: { HOME: home } });
    servers.push(server);
    const hop = await manager.open({
      destination: `${server.user}@127.0.0.1:${server.port}`,
      identity: server.clientKeyPath,
      accept_new: true,
      name: "fb",
    });
    expect(hop.state).toBe("fallback");
    expect(hop.mode).toBe("fallback");
    expect(hop.fallback_reason).toContain("does not run");
    expect(hop.upload?.uploaded).toBe(false);
    const client = manager.client("fb");
    const echoed = await client.exec({ cmd: 'echo "fallback on $HOME"', yield_time_ms: 5000 });
    expect(echoed.output).toContain(`fallback on ${home}`);
    expect(echoed.exit_code).toBe(0);
    expect(echoed.warning).toContain("fallback");
    const cat = await client.exec({ cmd: "cat", yield_time_ms: 300 });
    expect(cat.running).toBe(true);
    let seen = "";
    await waitFor("cat to echo", async () => {
      seen += (await client.writeStdin({ session_id: cat.session_id!, chars: seen ? "" : "ping\n", yield_time_ms: 300 })).output;
      return (seen.match(/ping/g) ?? []).length >= 2;
    });
    await client.closeSession({ session_id: cat.session_id! });
    await client.writeFile({ path: "f.txt", content: "via sftp" });
    expect(readFileSync(join(home, "f.txt"), "utf8")).toBe("via sftp");
    expect((await client.readFile({ path: "f.txt" })).content).toBe("via sftp");
    expect(existsSync(join(home, ".agentd", "ready.json"))).toBe(false);
    await waitFor("the code release after the fallback", () => releasedAfter("hop.fallback"));
    await manager.closeHop("fb");
  }, 120_000);
});
