/**
 * Command spawn benchmark: what agentd's spawner (commandSpawn.c through bun:ffi: cgroup join,
 * limits, drop to the command user, no_new_privs, in one clone+exec) adds to starting a command,
 * against a direct spawn of the same program in the same run (Bun.spawn, and the spawner with
 * nothing asked of it), and against util-linux's setpriv doing the user drop (an extra exec).
 * As root it also starts a command the way a worker running as the service user does: a request over
 * the IPC channel to agentd's monitor (a child process here, as the supervisor is), which spawns it
 * on the worker's terminal and reaps it on request.
 * Run: node_modules/.bin/bun bench/confine.ts — as root for the user drop, cgroup and monitor rows,
 * as a user for the namespace sandbox row; prints a markdown table.
 */
import { dlopen } from "bun:ffi";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nativeSpawn, type NativeSpawnSpec } from "../src/core/process/index.ts";
import { CommandCgroups, detectCgroupLayout, type SessionCgroup } from "../src/core/process/cgroups/index.ts";

const ROUNDS = 300;

function asNobodyIds() {
  return { uid: 65534, gid: 65534, groups: [65534] };
}
const root = process.getuid?.() === 0;
// nobody: any unprivileged uid other than this process's own.
const asNobody = { uid: 65534, gid: 65534, groups: [65534] };

const libc = dlopen("libc.so.6", { waitpid: { args: ["i32", "ptr", "i32"], returns: "i32" } });
const status = new Int32Array(1);

async function medianMs(start: () => Promise<void>): Promise<{ median: number; p90: number }> {
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await start();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)]!, p90: samples[Math.floor(samples.length * 0.9)]! };
}

const bunSpawn = async (argv: string[]) => {
  const child = Bun.spawn(argv, { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  await child.exited;
};

const viaSpawner = async (extra: Partial<NativeSpawnSpec>) => {
  const pid = nativeSpawn({ path: "/bin/true", argv: ["true"], env: {}, stdio: { fds: [0, 1, 2] }, noNewPrivs: false, ...extra });
  // /bin/true ends at once: a blocking waitpid reaps it, as PtyProcess.tryReap does.
  libc.symbols.waitpid(pid, status, 0);
};

/** A worker's request to a monitor child: start /bin/true on a terminal of this process, then reap it. */
function monitorChannel() {
  const waiting = new Map<number, (reply: { ok: boolean; value?: unknown; error?: unknown }) => void>();
  let next = 1;
  const child = Bun.spawn([process.execPath, import.meta.path, "--monitor"], {
    stdio: ["ignore", "inherit", "inherit"],
    serialization: "json",
    ipc: (reply: { id: number; ok: boolean; value?: unknown }) => waiting.get(reply.id)?.(reply),
  });
  const ask = <T>(request: object) =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      waiting.set(id, (reply) => {
        waiting.delete(id);
        if (reply.ok) resolve(reply.value as T);
        else reject(new Error(JSON.stringify(reply.error)));
      });
      child.send({ id, request });
    });
  return { child, ask };
}

async function main(): Promise<void> {
  const layout = detectCgroupLayout();
  const cgroups = root && layout.kind !== "none" ? CommandCgroups.open(layout, { subtreeName: "agentd-bench" }) : undefined;
  let cgroup: SessionCgroup | undefined;
  try {
    cgroup = cgroups?.create("bench", { pidsMax: 64, memoryMaxBytes: 256 * 1_048_576, cpuWeight: 50 });
    const rows: Array<[string, { median: number; p90: number }]> = [];
    const direct = await medianMs(() => bunSpawn(["/bin/true"]));
    rows.push(["direct: Bun.spawn /bin/true (baseline)", direct]);
    rows.push(["agentd spawner, nothing asked", await medianMs(() => viaSpawner({}))]);
    rows.push(["agentd spawner + no_new_privs", await medianMs(() => viaSpawner({ noNewPrivs: true }))]);
    if (!root) {
      // Started as a user: mount and PID namespaces around the command (agentd's paths hidden, its binary read-only).
      const sandbox = { hide: [mkdtempSync(join(tmpdir(), "agentd-bench-hidden-"))], readOnly: [process.execPath], privateTerminals: true };
      rows.push(["agentd spawner + no_new_privs + namespaces sandbox", await medianMs(() => viaSpawner({ noNewPrivs: true, sandbox }))]);
      rmSync(sandbox.hide[0]!, { recursive: true, force: true });
    }
    if (root) {
      const { child, ask } = monitorChannel();
      const { openpty } = await import("../src/pty/libcBindings.ts").then((m) => ({ openpty: m.libc().openpty }));
      const { ptr } = await import("bun:ffi");
      const { libc: ptyLibc } = await import("../src/pty/libcBindings.ts");
      const fds = new Int32Array(2);
      if (openpty(ptr(fds), ptr(fds, 4), null, null, null) !== 0) throw new Error("openpty failed");
      const name = new Uint8Array(256);
      ptyLibc().ptsname_r(fds[0]!, name, name.length);
      const tty = Buffer.from(name.subarray(0, name.indexOf(0))).toString("utf8");
      let session = 0;
      rows.push([
        "through agentd's monitor (worker as the service user): IPC request, spawner + command user + no_new_privs + cgroup, reap",
        await medianMs(async () => {
          const sessionId = `bench-${session++}`;
          const { pid } = await ask<{ pid: number }>({ op: "start", sessionId, kind: "command", words: ["/bin/true"], env: {}, tty });
          while (!(await ask<{ status?: unknown }>({ op: "reap", pid })).status);
          await ask({ op: "end_session", sessionId });
        }),
      ]);
      child.kill();
      ptyLibc().close(fds[0]!);
      ptyLibc().close(fds[1]!);
      rows.push([
        "agentd spawner + command user + no_new_privs",
        await medianMs(() => viaSpawner({ noNewPrivs: true, credentials: asNobody })),
      ]);
      if (cgroup)
        rows.push([
          `agentd spawner + command user + no_new_privs + cgroup (${cgroups?.kind})`,
          await medianMs(() => viaSpawner({ noNewPrivs: true, credentials: asNobody, cgroupProcs: cgroup!.procsPaths })),
        ]);
      rows.push([
        "setpriv --reuid --no-new-privs (extra exec)",
        await medianMs(() =>
          bunSpawn(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--no-new-privs", "--", "/bin/true"]),
        ),
      ]);
    }
    console.log(`| start and end of /bin/true, ${ROUNDS} rounds | median | p90 | added to direct (median) |`);
    console.log("|---|---|---|---|");
    for (const [name, t] of rows)
      console.log(
        `| ${name} | ${t.median.toFixed(2)} ms | ${t.p90.toFixed(2)} ms | ${t.median - direct.median >= 0 ? "+" : ""}${(t.median - direct.median).toFixed(2)} ms |`,
      );
  } finally {
    await cgroup?.kill();
    await cgroups?.closeAll();
  }
}

/** The monitor's side: a CommandMonitor answering this process's requests over Bun's IPC channel. */
async function runMonitor(): Promise<void> {
  const { CommandMonitor } = await import("../src/daemon/monitor/commandMonitor.ts");
  const { openStore } = await import("../src/core/store/index.ts");
  const { allMigrations } = await import("../src/daemon/allMigrations.ts");
  const { ptyConfigSchema } = await import("../src/core/config/sections/ptyConfig.ts");
  const { approvalsConfigSchema } = await import("../src/core/config/sections/approvalsConfig.ts");
  const { createLogger, setLogLevel } = await import("../src/core/log/index.ts");
  setLogLevel("warn");
  const monitor = new CommandMonitor({
    identity: { mode: "command_user", user: "nobody", credentials: asNobodyIds(), home: "/", problems: [] },
    workerUid: 0,
    pty: ptyConfigSchema().parse({}),
    approvals: approvalsConfigSchema().parse({}),
    db: openStore({ path: ":memory:", migrations: allMigrations }),
    ownPaths: () => [],
    reload: () => undefined,
    gateProblems: () => [],
    log: createLogger("bench-monitor"),
  });
  process.on("message", async (message) => process.send!(await monitor.handle(message)));
  process.on("disconnect", () => process.exit(0));
}

// Dispatch last: the helpers above must be initialised before a role runs.
if (process.argv[2] === "--monitor") await runMonitor();
else await main();
