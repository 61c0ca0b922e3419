import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { namespaceSandboxAvailable, nativeSpawn, SpawnError } from "../../../src/core/process/spawn/index.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";
import { addUser, deleteUser } from "../../support/systemUsers.ts";

// The namespace sandbox is for agentd started as a user, so these run the spawner as a throwaway
// user: the test (root) makes the user and a directory it owns, and a small driver script, run
// with setpriv as that user, spawns through nativeSpawn and answers in JSON. Missing root, useradd,
// setpriv or user namespaces fails them: they are the proof that the sandbox holds.

const SPAWN_MODULE = resolve(import.meta.dir, "../../../src/core/process/spawn/index.ts");
const USER = `agentdsbx${process.pid}`.slice(0, 31);

/** Runs as the throwaway user: one spawn (or the probe), reported as one line of JSON. */
const DRIVER = `
import { dlopen, ptr } from "bun:ffi";
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
const [spawnModule, requestText] = process.argv.slice(2);
const { nativeSpawn, namespaceSandboxAvailable, SpawnError } = await import(spawnModule);
const request = JSON.parse(requestText);
const libc = dlopen("libc.so.6", {
  prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
  waitpid: { args: ["i32", "ptr", "i32"], returns: "i32" },
  openpty: { args: ["ptr", "ptr", "ptr", "ptr", "ptr"], returns: "i32" },
  ptsname: { args: ["i32"], returns: "cstring" },
});
// As agentd (hardenProcess): not dumpable, so /proc/<pid> of a child sharing its memory is root's.
if (libc.symbols.prctl(4, 0n, 0n, 0n, 0n) !== 0 || libc.symbols.prctl(3, 0n, 0n, 0n, 0n) !== 0) throw new Error("PR_SET_DUMPABLE 0 failed");
if (request.probe) {
  console.log(JSON.stringify({ probe: namespaceSandboxAvailable() ?? null }));
  process.exit(0);
}
// Another session's terminal, as agentd would hold one: its slave's name goes to the command.
const other = new Int32Array(2);
if (libc.symbols.openpty(ptr(other), ptr(other, 4), null, null, null) !== 0) throw new Error("openpty failed");
const otherName = String(libc.symbols.ptsname(other[0]));
const report = { driverPid: process.pid };
const nul = openSync("/dev/null", "r");
let stdio, master = -1, outPath;
if (request.tty) {
  const fds = new Int32Array(2);
  if (libc.symbols.openpty(ptr(fds), ptr(fds, 4), null, null, null) !== 0) throw new Error("openpty failed");
  master = fds[0];
  stdio = { tty: fds[1] };
} else {
  outPath = request.dir + "/out-" + process.pid;
  const out = openSync(outPath, "w+");
  stdio = { fds: [nul, out, out] };
}
try {
  report.pid = nativeSpawn({
    path: request.path ?? "/bin/sh",
    argv: ["sh", "-c", request.script],
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", DRIVER: String(process.pid), DIR: request.dir, OTHER_TTY: otherName },
    cwd: request.cwd ?? "/",
    stdio,
    noNewPrivs: true,
    oomScoreAdj: 500,
    ...(request.cgroupProcs ? { cgroupProcs: request.cgroupProcs } : {}),
    ...(request.sandbox ? { sandbox: request.sandbox } : {}),
  });
} catch (error) {
  if (!(error instanceof SpawnError)) throw error;
  report.error = { stage: error.stage, errno: error.errno, message: error.message };
}
if ("tty" in stdio) closeSync(stdio.tty);
const status = new Int32Array(1);
if (report.pid) {
  try {
    report.nspid = readFileSync("/proc/" + report.pid + "/status", "utf8").match(/^NSpid:\\s*(.*)$/m)?.[1];
  } catch {}
  report.waited = libc.symbols.waitpid(report.pid, ptr(status), 0);
  report.code = (status[0] & 0x7f) === 0 ? (status[0] >> 8) & 0xff : null;
  report.signal = status[0] & 0x7f || null;
}
// -1 (ECHILD): no child left, not even the sandbox's vfork child, reaped or a zombie.
report.leftover = libc.symbols.waitpid(-1, ptr(status), 1);
if (master >= 0) {
  const chunks = [];
  const buffer = Buffer.alloc(4096);
  for (;;) {
    let n = 0;
    try { n = readSync(master, buffer); } catch { break; }
    if (n <= 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, n)));
  }
  report.output = Buffer.concat(chunks).toString();
} else {
  report.output = readFileSync(outPath, "utf8");
}
console.log(JSON.stringify(report));
`;

interface Report {
  driverPid: number;
  pid?: number;
  nspid?: string;
  waited?: number;
  code?: number | null;
  signal?: number | null;
  leftover: number;
  output: string;
  error?: { stage: string; errno: number; message: string };
}

let dir = "";
let uid = 0;
let gid = 0;
let userCreated = false;
/** Paths under the user's directory: what agentd would hide and keep read-only. */
let paths: { secretDir: string; config: string; binary: string; binDir: string; roDir: string };

function sh(argv: string[]): string {
  const result = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} failed (${result.exitCode}): ${result.stderr.toString()}`);
  return result.stdout.toString();
}

/** Runs the driver as the throwaway user; `wrap` goes between setpriv and bun (an unshare, say), `outer` before setpriv. */
function asUser(request: object, wrap: string[] = [], outer: string[] = []): string {
  const result = Bun.spawnSync(
    [
      ...outer,
      "setpriv",
      `--reuid=${uid}`,
      `--regid=${gid}`,
      "--clear-groups",
      "--",
      ...wrap,
      join(dir, "bun"),
      join(dir, "driver.ts"),
      join(dir, "spawn.js"),
      JSON.stringify({ dir, ...request }),
    ],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, TMPDIR: dir, BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0" },
      stdout: "pipe",
      stderr: "pipe",
      timeout: 30_000,
    },
  );
  const stdout = result.stdout.toString();
  if (result.exitCode !== 0) throw new Error(`the driver failed (${result.exitCode}): ${result.stderr.toString()}${stdout}`);
  return stdout.trim().split("\n").at(-1) ?? "";
}

function run(
  script: string,
  options: { tty?: boolean; cwd?: string; path?: string; sandbox?: object | null; cgroupProcs?: string[] } = {},
  outer: string[] = [],
): Report {
  const sandbox =
    options.sandbox === undefined ? { hide: [paths.secretDir, paths.config], readOnly: [paths.binary, paths.roDir] } : options.sandbox;
  const report = JSON.parse(asUser({ script, ...options, sandbox }, [], outer)) as Report;
  return report;
}

function started(report: Report): Report {
  if (report.error) throw new Error(`the sandboxed spawn failed: ${report.error.message}`);
  expect(report.waited).toBe(report.pid!);
  expect(report.leftover).toBe(-1);
  return report;
}

beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error("the sandbox tests make a throwaway user: run them as root (CI does)");
  addUser(["--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin"], USER);
  userCreated = true;
  uid = Number(sh(["id", "-u", USER]));
  gid = Number(sh(["id", "-g", USER]));
  dir = makeTempDir("agentd-sandbox-");
  chmodSync(dir, 0o755);
  // Laid out as agentd's own paths under a home: share/agentd (data), conf/agentd/config.toml, bin/agentd.
  const secretDir = join(dir, "share", "agentd");
  const confDir = join(dir, "conf", "agentd");
  const binDir = join(dir, "bin");
  const roDir = join(dir, "readonly");
  for (const path of [secretDir, confDir, binDir, roDir]) mkdirSync(path, { recursive: true });
  writeFileSync(join(secretDir, "token"), "TOKEN-SECRET\n");
  writeFileSync(join(confDir, "config.toml"), "CONFIG-SECRET\n");
  writeFileSync(join(binDir, "agentd"), "BINARY\n");
  writeFileSync(join(binDir, "other"), "OTHER\n");
  writeFileSync(join(roDir, "kept"), "KEPT\n");
  writeFileSync(join(dir, "driver.ts"), DRIVER);
  // The checkout may sit where only root can enter (CI's `mktemp -d` is 0700): the user gets its
  // own copy of bun and of the spawner, bundled (the C source inlined).
  copyFileSync(process.execPath, join(dir, "bun"));
  chmodSync(join(dir, "bun"), 0o755);
  sh([process.execPath, "build", SPAWN_MODULE, "--target", "bun", "--outfile", join(dir, "spawn.js")]);
  sh(["chown", "-R", `${uid}:${gid}`, dir]);
  paths = { secretDir, config: join(confDir, "config.toml"), binary: join(binDir, "agentd"), binDir, roDir };
});

afterAll(async () => {
  removeTempDirs();
  // Where a broken sandbox would have let a test move the whole directory.
  if (dir) rmSync(`${dir}-moved`, { recursive: true, force: true });
  // Every driver has been waited for, and a sandbox ends with its pid 1: no process of the user is left.
  if (userCreated) await deleteUser(USER);
});

describe("the namespace sandbox, started as a user", () => {
  test("the command runs as the same uid and gid, which owns its files, with no_new_privs", () => {
    const report = started(run('id -u; id -g; cat /proc/self/uid_map; stat -c %u "$DIR/bin/other"; grep NoNewPrivs /proc/self/status'));
    expect(report.code).toBe(0);
    const lines = report.output.trim().split("\n");
    expect(lines[0]).toBe(String(uid));
    expect(lines[1]).toBe(String(gid));
    expect(lines[2]!.trim().split(/\s+/)).toEqual([String(uid), String(uid), "1"]);
    expect(lines[3]).toBe(String(uid));
    expect(lines[4]).toMatch(/^NoNewPrivs:\s*1$/);
  });

  test("a hidden directory shows nothing and its files cannot be opened; a hidden file reads empty", () => {
    const report = started(
      run(
        'ls -A "$DIR/share/agentd"; echo "ls=$?"; cat "$DIR/share/agentd/token"; echo "cat=$?"; cat "$DIR/conf/agentd/config.toml"; echo "config=$?"; echo x > "$DIR/share/agentd/new"; echo "create=$?"; chmod 700 "$DIR/share/agentd"; echo "chmod=$?"',
      ),
    );
    expect(report.output).not.toContain("SECRET");
    expect(report.output).toMatch(/ls=[1-9]/);
    expect(report.output).toMatch(/cat=[1-9]/);
    expect(report.output).toContain("config=0"); // /dev/null: empty
    expect(report.output).toMatch(/create=[1-9]/);
    expect(report.output).toMatch(/chmod=[1-9]/);
    // Outside, nothing changed.
    expect(readFileSync(join(paths.secretDir, "token"), "utf8")).toBe("TOKEN-SECRET\n");
  });

  test("a read-only file cannot be written, renamed over or deleted; a read-only directory takes no new file", () => {
    const report = started(
      run(
        [
          'echo x > "$DIR/bin/agentd"; echo "write=$?"',
          'mv "$DIR/bin/other" "$DIR/bin/agentd"; echo "rename=$?"',
          'rm -f "$DIR/bin/agentd"; echo "remove=$?"',
          'chmod 777 "$DIR/bin/agentd"; echo "chmod=$?"',
          'touch "$DIR/readonly/new"; echo "create=$?"',
          'rm -f "$DIR/readonly/kept"; echo "remove_in_dir=$?"',
          'echo y > "$DIR/bin/fresh"; echo "beside=$?"',
        ].join("; "),
      ),
    );
    expect(report.output).toContain("Read-only file system");
    expect(report.output).toContain("Device or resource busy");
    for (const word of ["write", "rename", "remove", "chmod", "create", "remove_in_dir"])
      expect(report.output).toMatch(new RegExp(`${word}=[1-9]`));
    // The directory around the binary stays the user's own.
    expect(report.output).toContain("beside=0");
    expect(readFileSync(paths.binary, "utf8")).toBe("BINARY\n");
    expect(readFileSync(join(paths.roDir, "kept"), "utf8")).toBe("KEPT\n");
  });

  test("the directories above what is protected cannot be renamed or removed, and stay writable", () => {
    // Else the command could move conf/ aside and leave its own config.toml where agentd reads it next start.
    const report = started(
      run(
        [
          'mv "$DIR/conf" "$DIR/conf-moved"; echo "conf=$?"',
          'mv "$DIR/conf/agentd" "$DIR/conf/moved"; echo "conf_agentd=$?"',
          'mv "$DIR/share" "$DIR/share-moved"; echo "share=$?"',
          'mv "$DIR/share/agentd" "$DIR/share/moved"; echo "data=$?"',
          'mv "$DIR/bin" "$DIR/bin-moved"; echo "bin=$?"',
          'mv "$DIR" "$DIR-moved"; echo "top=$?"',
          'rm -rf "$DIR/conf"; echo "rm=$?"',
          'touch "$DIR/conf/fresh" "$DIR/share/fresh"; echo "writable=$?"',
        ].join("; "),
      ),
    );
    for (const word of ["conf", "conf_agentd", "share", "data", "bin", "top", "rm"])
      expect(report.output).toMatch(new RegExp(`\\b${word}=[1-9]`));
    expect(report.output).toContain("writable=0");
    expect(readFileSync(paths.config, "utf8")).toBe("CONFIG-SECRET\n");
    expect(existsSync(join(paths.secretDir, "token"))).toBe(true);
    expect(existsSync(`${dir}-moved`)).toBe(false);
  });

  test("the command is pid 1 of its own pid namespace; the pid returned is its pid outside", () => {
    const report = started(run('echo "pid=$$"; sleep 0.3; exit 42'));
    expect(report.output).toContain("pid=1");
    expect(report.nspid?.split(/\s+/)).toEqual([String(report.pid), "1"]);
    expect(report.code).toBe(42);
  });

  test("ps and /proc show only the sandbox's processes, and agentd's side cannot be signalled", () => {
    const report = started(
      run(
        'ps -e -o pid=,comm=; ls /proc | grep -c "^[0-9]"; test -e "/proc/$DRIVER"; echo "seen=$?"; kill -9 "$DRIVER"; echo "kill=$?"; kill -9 -1; echo done',
      ),
    );
    const lines = report.output.trim().split("\n");
    const processes = lines.filter((line) => /^\s*\d+\s+\S+$/.test(line)).map((line) => line.trim().split(/\s+/));
    expect(processes.map(([, name]) => name)).toEqual(["sh", "ps"]);
    expect(processes[0]![0]).toBe("1");
    expect(report.output).toMatch(/seen=[1-9]/);
    expect(report.output).toMatch(/kill=[1-9]/);
    // kill -1 reached only the sandbox (the shell, pid 1, ignores SIGKILL from inside): the driver answered.
    expect(report.output).toContain("done");
    expect(report.code).toBe(0);
  });

  test("a user namespace the command makes cannot unmount or remount what hides and protects", () => {
    const nested = [
      'umount "$DIR/share/agentd"; echo "umount=$?"',
      'umount -l "$DIR/share/agentd"; echo "umount_lazy=$?"',
      'ls -A "$DIR/share/agentd"; cat "$DIR/share/agentd/token"',
      'umount "$DIR/conf/agentd/config.toml"; echo "umount_file=$?"; cat "$DIR/conf/agentd/config.toml"',
      'mount -o remount,bind,rw "$DIR/readonly"; echo "remount=$?"; touch "$DIR/readonly/new"; echo "create=$?"',
      'umount "$DIR/readonly"; echo "umount_ro=$?"',
      'umount "$DIR/bin/agentd"; echo "umount_bin=$?"; echo x > "$DIR/bin/agentd"; echo "write=$?"',
      'umount /proc; echo "umount_proc=$?"; test -e "/proc/$DRIVER"; echo "seen=$?"',
      'mount --bind "$DIR" /mnt; echo "rebind=$?"; ls -A /mnt/share/agentd',
      'mount --rbind "$DIR" /mnt; echo "rbind=$?"; umount /mnt/share/agentd; echo "rbind_umount=$?"; ls -A /mnt/share/agentd; cat /mnt/share/agentd/token',
      "exit 0",
    ].join("; ");
    const report = started(run(`unshare -Urm sh -c '${nested}'; echo "unshare=$?"`));
    expect(report.output).toContain("unshare=0"); // the nested namespace itself was allowed
    expect(report.output).toContain("rbind=0"); // and a recursive copy, whose mounts come along locked
    expect(report.output).not.toContain("SECRET");
    for (const word of [
      "umount",
      "umount_lazy",
      "umount_file",
      "remount",
      "create",
      "umount_ro",
      "umount_bin",
      "write",
      "umount_proc",
      "seen",
      "rebind",
      "rbind_umount",
    ])
      expect(report.output).toMatch(new RegExp(`${word}=[1-9]`));
    expect(readFileSync(paths.binary, "utf8")).toBe("BINARY\n");
  });

  test("a sandboxed command on a terminal is its session's leader with the terminal as its controlling tty", () => {
    const report = started(run('tty; ps -o pid=,sid=,tty= -p $$; test -t 0 && test -t 1 && echo "isatty"; exit 7', { tty: true }));
    expect(report.output).toMatch(/\/dev\/pts\/\d+/);
    expect(report.output).toMatch(/^\s*1\s+1\s+pts\/\d+\s*$/m);
    expect(report.output).toContain("isatty");
    expect(report.code).toBe(7);
  });

  test("the command joins its cgroup from inside the sandbox (a cgroup2 subtree delegated to the user)", () => {
    const mount = readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .map((line) => line.split(" "))
      .find((fields) => fields[fields.indexOf("-") + 1] === "cgroup2")?.[4];
    if (!mount) throw new Error("there is no cgroup2 mount: the sandbox's cgroup join cannot be tested");
    const top = join(mount, `agentd-sandbox-test-${process.pid}`);
    const parent = join(top, "parent");
    const command = join(top, "cmd");
    mkdirSync(parent, { recursive: true });
    mkdirSync(command);
    try {
      sh(["chown", "-R", `${uid}:${gid}`, top]);
      // The driver starts in `parent`, so moving its command to `cmd` is the user's to do.
      const report = started(
        run('grep "^0::" /proc/self/cgroup', { cgroupProcs: [join(command, "cgroup.procs")] }, [
          "sh",
          "-c",
          `echo $$ > ${join(parent, "cgroup.procs")} && exec "$@"`,
          "sh",
        ]),
      );
      expect(report.output).toContain(`0::/${top.slice(mount.length + 1)}/cmd`);
      expect(report.code).toBe(0);
    } finally {
      removeCgroups([command, parent, top]);
    }
  });

  test("with privateTerminals, agentd's other terminals are out of reach and new ones still open", () => {
    const script = 'test -e "$OTHER_TTY"; echo "other=$?"; test -t 0 && echo "own_isatty"; script -qc "tty" /dev/null; echo "script=$?"';
    const shared = started(run(script, { tty: true }));
    expect(shared.output).toContain("other=0"); // without it: the same uid's /dev/pts, another session's input readable
    const own = started(run(script, { tty: true, sandbox: { hide: [], readOnly: [], privateTerminals: true } }));
    expect(own.output).toMatch(/other=[1-9]/);
    expect(own.output).toContain("own_isatty");
    expect(own.output).toMatch(/\/dev\/pts\/\d+/); // `script` made a terminal in the sandbox's own devpts
    expect(own.output).toContain("script=0");
  });

  test("a failure in the sandbox's pid 1 is reported with its stage and errno, and nothing is left to reap", () => {
    const cwd = started2(run("true", { cwd: join(dir, "nowhere") }));
    expect(cwd.stage).toBe("cwd");
    expect(cwd.errno).toBe(2);
    const exec = started2(run("true", { path: join(dir, "missing-program") }));
    expect(exec.stage).toBe("exec");
    expect(exec.errno).toBe(2);
    // Paths are resolved before the spawn: a missing one fails there, naming it.
    const hidden = started2(run("true", { sandbox: { hide: [join(dir, "no-such-dir")], readOnly: [] } }));
    expect(hidden.stage).toBe("hide");
    expect(hidden.message).toContain(join(dir, "no-such-dir"));
    const readOnly = started2(run("true", { sandbox: { hide: [], readOnly: [join(dir, "no-such-file")] } }));
    expect(readOnly.stage).toBe("read_only");
    expect(readOnly.message).toContain(join(dir, "no-such-file"));
  });

  test("without a sandbox the same driver runs in agentd's namespaces (the comparison holds)", () => {
    const report = started(run('echo "pid=$$"; cat "$DIR/share/agentd/token"', { sandbox: null }));
    expect(report.output).not.toContain("pid=1\n");
    expect(report.output).toContain("TOKEN-SECRET");
  });
});

/** The driver and its command have ended, so the cgroups are empty (a dying task may hold one a moment). */
function removeCgroups(dirs: readonly string[]): void {
  for (const path of dirs) {
    for (let attempt = 0; existsSync(path); attempt++) {
      try {
        rmdirSync(path);
      } catch (error) {
        if (attempt >= 50) throw error;
        Bun.sleepSync(20);
      }
    }
  }
}

/** The error of a spawn that must have failed, after checking that it left no child behind. */
function started2(report: Report): NonNullable<Report["error"]> {
  expect(report.pid).toBeUndefined();
  expect(report.leftover).toBe(-1);
  if (!report.error) throw new Error("the spawn should have failed");
  return report.error;
}

describe("namespaceSandboxAvailable", () => {
  test("answers undefined for a user where user namespaces work", () => {
    expect(JSON.parse(asUser({ probe: true }))).toEqual({ probe: null });
  });

  test("says why not where the user may make no user namespace (max_user_namespaces 0 in its own namespace)", () => {
    // The limit is per user namespace: set to 0 inside one, it holds only there, never for the host.
    const answer = JSON.parse(
      asUser({ probe: true }, [
        "unshare",
        "--map-current-user",
        "--keep-caps",
        "sh",
        "-c",
        'echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-all --ambient-caps=-all -- "$@"',
        "sh",
      ]),
    ) as { probe: string | null };
    expect(answer.probe).toContain("max_user_namespaces");
    expect(answer.probe).toContain("ENOSPC");
  });

  test("refuses root, which would keep every capability of the sandbox", () => {
    expect(namespaceSandboxAvailable()).toContain("root");
    let error: unknown;
    try {
      nativeSpawn({
        path: "/bin/true",
        argv: ["true"],
        env: {},
        stdio: { fds: [0, 1, 2] },
        noNewPrivs: true,
        sandbox: { hide: [], readOnly: [] },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as SpawnError).stage).toBe("namespaces");
    expect((error as SpawnError).errno).toBe(1);
  });

  test("refuses credentials and relative paths before anything starts", () => {
    const spec = { path: "/bin/true", argv: ["true"], env: {}, stdio: { fds: [0, 1, 2] as const }, noNewPrivs: true };
    expect(() => nativeSpawn({ ...spec, credentials: { uid: 1, gid: 1, groups: [] }, sandbox: { hide: [], readOnly: [] } })).toThrow(
      "no credentials",
    );
    expect(() => nativeSpawn({ ...spec, sandbox: { hide: ["relative"], readOnly: [] } })).toThrow("absolute");
  });
});
