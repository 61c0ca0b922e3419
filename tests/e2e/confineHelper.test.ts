import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commandEnv, helperEnv } from "../../src/core/process/confinement/helperEnv.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// Every command starts through `agentd __confine`, a Bun program: nothing the model controls (the
// command's environment, its working directory) may run code in it before it has confined itself.

let daemon: DaemonProcess;
let work: string;
let dataDir: string;

beforeAll(async () => {
  work = makeTempDir("agentd-confine-work-");
  // What would run first in the helper if it were read: a marker file says so.
  writeFileSync(
    join(work, "preload.js"),
    `require("node:fs").writeFileSync(${JSON.stringify(join(work, "preloaded"))}, String(process.pid));`,
  );
  writeFileSync(join(work, "bunfig.toml"), `preload = [${JSON.stringify(join(work, "preload.js"))}]\n`);
  writeFileSync(join(work, ".env"), "AGENTD_DOTENV_LOADED=1\n");
  dataDir = makeTempDir("agentd-confine-data-");
  daemon = await startDaemon({ dataDir, config: {} });
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  removeTempDirs();
});

const run = (cmd: string, env: Record<string, string> = {}) =>
  api<{ output: string; exit_code: number | null }>(daemon.url, "/api/pty", { body: { cmd, env, workdir: work, yield_time_ms: 5000 } });

describe("the confinement helper", () => {
  test("BUN_OPTIONS, a bunfig.toml and a .env in the working directory run nothing in it; the command still gets its variables", async () => {
    const result = await run('echo "opts=$BUN_OPTIONS dotenv=$AGENTD_DOTENV_LOADED."', {
      BUN_OPTIONS: `--preload ${join(work, "preload.js")}`,
    });
    expect(result.exit_code).toBe(0);
    expect(result.output).toContain(`opts=--preload ${join(work, "preload.js")} dotenv=.`);
    expect(existsSync(join(work, "preloaded"))).toBe(false);
  });

  test("the command runs with no_new_privs, default signal handling, nothing blocked and no descriptor of agentd's", async () => {
    const result = await run("grep -E '^(NoNewPrivs|SigIgn|SigBlk):' /proc/self/status; ls /proc/self/fd | tr '\\n' ' '");
    expect(result.output).toMatch(/NoNewPrivs:\s+1/);
    expect(result.output).toMatch(/SigIgn:\s+0+\b/);
    expect(result.output).toMatch(/SigBlk:\s+0+\b/);
    // stdin, stdout, stderr (the terminal) and the directory ls itself reads.
    expect(result.output.trim().split("\n").at(-1)?.trim().split(" ")).toEqual(["0", "1", "2", "3"]);
  });

  test("a command cannot ptrace a process outside its Landlock domain, not even one of agentd's own user", async () => {
    const outside = Bun.spawn(["sleep", "30"]);
    try {
      // PTRACE_ATTACH (16) through libc; PTRACE_DETACH (17) if it ever got through.
      const attach = `import ctypes; libc = ctypes.CDLL(None, use_errno=True); r = libc.ptrace(16, ${outside.pid}, 0, 0); print("attach", r, ctypes.get_errno()); r == 0 and libc.ptrace(17, ${outside.pid}, 0, 0)`;
      const result = await run(`python3 -c '${attach}'`);
      // EPERM: refused, even to root, whose commands run in a domain too.
      expect(result.output).toContain("attach -1 1");
    } finally {
      outside.kill();
    }
  });

  test("Bun unpacks native addons into a TMPDIR inside the data dir, not one commands share; commands get the operator's back", async () => {
    const result = await run("echo tmp=[$TMPDIR]");
    expect(result.output).not.toContain(dataDir);
    // The first hop loads ssh2 and its addons, even one that fails to connect.
    await api(daemon.url, "/api/hops", { body: { destination: "nobody@127.0.0.1:1" }, expect: 502 });
    const unpacked = readdirSync(join(dataDir, "tmp")).filter((name) => name.endsWith(".node"));
    expect(unpacked.length).toBeGreaterThan(0);
    expect(statSync(join(dataDir, "tmp")).mode & 0o777).toBe(0o700);
  });

  test("a data dir opened to everyone (chmod 0777, which Landlock does not stop) is closed again", async () => {
    chmodSync(dataDir, 0o777);
    await waitFor("the data dir to be closed again", () => ((statSync(dataDir).mode & 0o777) === 0o700 ? true : undefined), {
      timeoutMs: 10_000,
    });
    expect(daemon.lines.some((r) => r.event === "security.data_dir_reopened")).toBe(true);
  });

  test("the variables that would change the helper travel renamed and come back whole", () => {
    const env = { LD_PRELOAD: "/x.so", BUN_OPTIONS: "--preload y", GLIBC_TUNABLES: "t", PATH: "/bin", HOME: "/h" };
    const carried = helperEnv(env);
    expect(Object.keys(carried).filter((name) => /^(LD_|BUN_|GLIBC_)/.test(name))).toEqual([]);
    expect(commandEnv(carried)).toEqual(env);
  });
});
