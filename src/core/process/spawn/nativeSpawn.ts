import { cc, dlopen, ptr } from "bun:ffi";
import { accessSync, closeSync, constants, existsSync, openSync, realpathSync, writeSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { dirname, isAbsolute } from "node:path";
import source from "./commandSpawn.c" with { type: "text" };
import { SPAWN_STAGES, SpawnError } from "./spawnError.ts";

/** Who a command runs as: numeric ids, resolved by the caller (commandUser.ts). */
export interface SpawnCredentials {
  uid: number;
  gid: number;
  groups: readonly number[];
}

export interface SpawnLimit {
  /** RLIMIT_* number (RLIMIT_NPROC 6, RLIMIT_AS 9, …). */
  resource: number;
  soft: number;
  hard: number;
}

export interface NativeSpawnSpec {
  /** Absolute path of the program; argv[0] is only its name. */
  path: string;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** The terminal's slave fd (it becomes the controlling terminal and fds 0–2), or three fds. */
  stdio: { tty: number } | { fds: readonly [number, number, number] };
  /** Dropped to before exec; absent: the caller's own. */
  credentials?: SpawnCredentials;
  /** `cgroup.procs` files the child joins before it runs anything. */
  cgroupProcs?: readonly string[];
  noNewPrivs: boolean;
  oomScoreAdj?: number;
  limits?: readonly SpawnLimit[];
  umask?: number;
  /**
   * Runs the command in its own mount and pid namespaces, in a user namespace agentd makes once for
   * its sandboxes (agentd started as a user, where no other uid can hold it): same uid inside, `hide` covered (a directory by an empty tmpfs it cannot
   * even list, a file by /dev/null), `readOnly` bound read-only, a /proc of its own, and the command
   * pid 1 of its namespace. Absolute paths, which must exist; symlinks are resolved, and the
   * directories above them that the uid could rename are made mount points so it cannot. Not with
   * `credentials`, nor as root; implies no_new_privs. Check namespaceSandboxAvailable() first.
   */
  sandbox?: SpawnSandbox;
}

export interface SpawnSandbox {
  hide: readonly string[];
  readOnly: readonly string[];
  /**
   * A /dev/pts of its own, so it cannot open (and read the input of) agentd's other terminals,
   * which are the same uid's. Its own terminal then has no name (`tty` says "not a tty").
   */
  privateTerminals?: boolean;
}

const FIELDS = 32;
const KEEP = -1n;
const ENOENT = 2;
const EINVAL = 22;
/** commandSpawn.c's `sandbox` field. */
const SANDBOX = { none: 0n, full: 1n, userNamespaceOnly: 2n } as const;

interface Spawner {
  spawn(spec: Uint8Array): number;
  /** Blocking waitpid (through EINTR): the wait status, or -1. */
  wait(pid: number): number;
}
let spawner: Spawner | undefined;

/**
 * TinyCC reads its source from a path: a memfd keeps the C text off every filesystem a command
 * could write to between agentd writing it and the compiler reading it.
 */
function compile(): Spawner {
  const libc = dlopen("libc.so.6", { memfd_create: { args: ["ptr", "u32"], returns: "i32" } });
  const MFD_CLOEXEC = 1;
  const fd = libc.symbols.memfd_create(Buffer.from("agentd-spawn\0"), MFD_CLOEXEC);
  libc.close();
  if (fd < 0) throw new SpawnError("the spawner", "exec", 38, "memfd_create failed");
  try {
    writeSync(fd, source);
    const { symbols } = cc({
      source: `/proc/self/fd/${fd}`,
      symbols: { agentd_spawn: { args: ["ptr"], returns: "i32" }, agentd_wait: { args: ["i32"], returns: "i32" } },
    });
    return { spawn: (spec) => symbols.agentd_spawn(ptr(spec)), wait: (pid) => symbols.agentd_wait(pid) };
  } finally {
    closeSync(fd);
  }
}

function loaded(): Spawner {
  spawner ??= compile();
  return spawner;
}

/** Waits for a child nativeSpawn started (blocking): its wait status, or -1 (not a child, or already reaped). */
export function waitForChild(pid: number): number {
  return loaded().wait(pid);
}

function pointerTo(bytes: Uint8Array): bigint {
  return BigInt(ptr(bytes));
}

function cString(text: string): Buffer {
  return Buffer.from(`${text}\0`, "utf8");
}

function errnoOf(error: unknown): number {
  const code = (error as NodeJS.ErrnoException).code ?? "";
  return osConstants.errno[code as keyof typeof osConstants.errno] ?? EINVAL;
}

const STAGE_LISTS = { hide: "hide", read_only: "readOnly", pin: "pin" } as const;

/**
 * The sandbox's paths as the kernel will mount them (symlinks resolved, so each must exist), and the
 * directories above them its uid could rename (their parent is writable to it), which are pinned.
 */
function sandboxPaths(program: string, sandbox: SpawnSandbox, withCredentials: boolean) {
  if (withCredentials)
    throw new SpawnError(program, "namespaces", EINVAL, "a sandbox runs the command as agentd's own uid: no credentials");
  const resolve = (stage: "hide" | "read_only") => (path: string) => {
    if (!isAbsolute(path)) throw new SpawnError(program, stage, EINVAL, `sandbox paths must be absolute: ${path}`);
    try {
      return realpathSync(path);
    } catch (error) {
      throw new SpawnError(program, stage, errnoOf(error), path);
    }
  };
  const hide = sandbox.hide.map(resolve("hide"));
  const readOnly = sandbox.readOnly.map(resolve("read_only"));
  const protectedPaths = new Set([...hide, ...readOnly]);
  const pins = new Set<string>();
  for (const path of protectedPaths) {
    for (let dir = dirname(path); dir !== "/"; dir = dirname(dir)) {
      if (pins.has(dir) || protectedPaths.has(dir)) continue;
      try {
        accessSync(dirname(dir), constants.W_OK);
        pins.add(dir);
      } catch {
        // Its parent is not the command's to change: it cannot be renamed.
      }
    }
  }
  const pin = [...pins].sort((a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b));
  return { hide, readOnly, pin, privateTerminals: sandbox.privateTerminals === true };
}

/** The user namespace every sandbox joins: an fd on it, held for the life of this process. */
let sandboxUserNamespace: number | undefined;

/**
 * Made once, by a helper: the namespace's uid_map must be written by a process that may open it, and
 * agentd is not dumpable, so /proc/<pid> of a child still sharing its memory is root's. The helper
 * makes a user namespace and execs `sleep` (an exec'd process is dumpable); agentd, its owner, maps
 * its own uid and gid in it ("U U 1", setgroups denied), keeps /proc/<helper>/ns/user open and
 * ends the helper. Every sandbox then joins it with setns: its owner has every capability in it.
 */
function userNamespace(program: string): number {
  if (sandboxUserNamespace !== undefined) return sandboxUserNamespace;
  const sleep = ["/bin/sleep", "/usr/bin/sleep"].find((path) => existsSync(path));
  if (!sleep) throw new SpawnError(program, "namespaces", ENOENT, "no sleep program to make the sandboxes' user namespace with");
  const devNull = openSync("/dev/null", constants.O_RDWR);
  let helper: number;
  try {
    helper = start(
      { path: sleep, argv: ["sleep", "3600"], env: {}, cwd: "/", stdio: { fds: [devNull, devNull, devNull] }, noNewPrivs: true },
      SANDBOX.userNamespaceOnly,
    );
  } finally {
    closeSync(devNull);
  }
  try {
    const uid = process.geteuid?.() ?? -1;
    const gid = process.getegid?.() ?? -1;
    for (const [file, text] of [
      ["setgroups", "deny"],
      ["uid_map", `${uid} ${uid} 1`],
      ["gid_map", `${gid} ${gid} 1`],
    ] as const) {
      try {
        const fd = openSync(`/proc/${helper}/${file}`, constants.O_WRONLY);
        try {
          writeSync(fd, text);
        } finally {
          closeSync(fd);
        }
      } catch (error) {
        throw new SpawnError(program, "id_map", errnoOf(error), `writing ${file}`);
      }
    }
    sandboxUserNamespace = openSync(`/proc/${helper}/ns/user`, constants.O_RDONLY);
    return sandboxUserNamespace;
  } finally {
    try {
      process.kill(helper, "SIGKILL");
    } catch {
      // Ended already (the OOM killer): reaped below all the same.
    }
    waitForChild(helper);
  }
}

/** Starts a command through commandSpawn.c and returns its pid; it never starts with less than asked. */
export function nativeSpawn(spec: NativeSpawnSpec): number {
  if (!spec.sandbox) return start(spec, SANDBOX.none);
  const paths = sandboxPaths(spec.path, spec.sandbox, spec.credentials !== undefined);
  return start({ ...spec, noNewPrivs: true }, SANDBOX.full, paths, userNamespace(spec.path));
}

function start(spec: NativeSpawnSpec, mode: bigint, sandbox?: ReturnType<typeof sandboxPaths>, userNamespaceFd = -1): number {
  const { spawn } = loaded();
  // Everything the C side points into stays referenced here until the call has returned.
  const keep: Uint8Array[] = [];
  const hold = (bytes: Uint8Array): bigint => {
    keep.push(bytes);
    return pointerTo(bytes);
  };
  const strings = (items: readonly string[]): bigint => {
    const array = new BigUint64Array(items.length + 1);
    items.forEach((item, index) => {
      array[index] = hold(cString(item));
    });
    return hold(new Uint8Array(array.buffer));
  };
  const cgroupFds = (spec.cgroupProcs ?? []).map((path) => openSync(path, constants.O_WRONLY));
  try {
    const fields = new BigInt64Array(FIELDS);
    fields[0] = hold(cString(spec.path));
    fields[1] = strings(spec.argv);
    fields[2] = strings(Object.entries(spec.env).map(([name, value]) => `${name}=${value}`));
    fields[3] = spec.cwd === undefined ? 0n : hold(cString(spec.cwd));
    if ("tty" in spec.stdio) {
      fields[4] = BigInt(spec.stdio.tty);
    } else {
      fields[4] = -1n;
      spec.stdio.fds.forEach((fd, index) => {
        fields[5 + index] = BigInt(fd);
      });
    }
    const credentials = spec.credentials;
    fields[8] = credentials ? BigInt(credentials.uid) : KEEP;
    fields[9] = credentials ? BigInt(credentials.gid) : KEEP;
    fields[10] = credentials ? BigInt(credentials.groups.length) : KEEP;
    fields[11] = credentials ? hold(new Uint8Array(new Uint32Array([...credentials.groups, 0]).buffer)) : 0n;
    fields[12] = BigInt(cgroupFds.length);
    fields[13] = hold(new Uint8Array(new Int32Array([...cgroupFds, -1]).buffer));
    fields[14] = spec.noNewPrivs ? 1n : 0n;
    fields[15] = BigInt(spec.oomScoreAdj ?? -1001);
    const limits = spec.limits ?? [];
    fields[16] = BigInt(limits.length);
    fields[17] = hold(
      new Uint8Array(new BigInt64Array([...limits.flatMap((l) => [BigInt(l.resource), BigInt(l.soft), BigInt(l.hard)]), 0n]).buffer),
    );
    fields[18] = spec.umask === undefined ? KEEP : BigInt(spec.umask);
    // 19, 20: err_stage, err_errno (out)
    fields[21] = mode;
    fields[22] = BigInt(userNamespaceFd);
    fields[23] = BigInt(sandbox?.hide.length ?? 0);
    fields[24] = strings(sandbox?.hide ?? []);
    fields[25] = BigInt(sandbox?.readOnly.length ?? 0);
    fields[26] = strings(sandbox?.readOnly ?? []);
    fields[27] = sandbox?.privateTerminals ? 1n : 0n;
    fields[28] = BigInt(sandbox?.pin.length ?? 0);
    fields[29] = strings(sandbox?.pin ?? []);
    // 30, 31: err_index, pid (out)
    const pid = spawn(new Uint8Array(fields.buffer));
    if (pid > 0) return pid;
    const stage = SPAWN_STAGES[Number(fields[19])] ?? "exec";
    const failedPath =
      stage === "hide" || stage === "read_only" || stage === "pin" ? sandbox?.[STAGE_LISTS[stage]][Number(fields[30])] : undefined;
    throw new SpawnError(spec.path, stage, Number(fields[20]), failedPath);
  } finally {
    for (const fd of cgroupFds) closeSync(fd);
    keep.length = 0;
  }
}
