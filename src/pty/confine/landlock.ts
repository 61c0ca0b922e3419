import { ptr, read, type Library } from "bun:ffi";
import { openLibc } from "../../core/ffi/openLibc.ts";
import { cString } from "../cStrings.ts";
import type { LandlockRule } from "./landlockPlan.ts";

const SYS_LANDLOCK_CREATE_RULESET = 444;
const SYS_LANDLOCK_ADD_RULE = 445;
const SYS_LANDLOCK_RESTRICT_SELF = 446;
const LANDLOCK_CREATE_RULESET_VERSION = 1;
const LANDLOCK_RULE_PATH_BENEATH = 1;
const PR_SET_NO_NEW_PRIVS = 38;
const O_PATH = 0o10000000;
const O_CLOEXEC = 0o2000000;
// O_NOFOLLOW differs between x86_64 and aarch64.
const O_NOFOLLOW = process.arch === "arm64" ? 0o100000 : 0o400000;

const ACCESS_EXECUTE = 1 << 0;
const ACCESS_WRITE_FILE = 1 << 1;
const ACCESS_READ_FILE = 1 << 2;
const ACCESS_READ_DIR = 1 << 3;
const ACCESS_TRUNCATE = 1 << 14;
const ACCESS_IOCTL_DEV = 1 << 15;
const FILE_ACCESS = ACCESS_EXECUTE | ACCESS_WRITE_FILE | ACCESS_READ_FILE | ACCESS_TRUNCATE | ACCESS_IOCTL_DEV;

const SYMBOLS = {
  // Pointers go as numbers (ptr()), so one declaration serves all three calls.
  syscall: { args: ["i64", "u64", "u64", "u64", "u64"], returns: "i64" },
  prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
  open: { args: ["ptr", "i32"], returns: "i32" },
  close: { args: ["i32"], returns: "i32" },
  __errno_location: { args: [], returns: "ptr" },
} as const;

type Libc = Library<typeof SYMBOLS>["symbols"];
let libc: Libc | undefined;

function load(): Libc {
  libc ??= openLibc(SYMBOLS).symbols;
  return libc;
}

/** The kernel's Landlock ABI version, 0 when Landlock is off or missing. */
export function landlockAbi(): number {
  try {
    const version = Number(load().syscall(SYS_LANDLOCK_CREATE_RULESET, 0n, 0n, BigInt(LANDLOCK_CREATE_RULESET_VERSION), 0n));
    return Math.max(version, 0);
  } catch {
    return 0;
  }
}

/** Every filesystem right this ABI knows: all are handled, so only what a rule grants is allowed. */
export function handledAccess(abi: number): number {
  if (abi >= 5) return (1 << 16) - 1;
  if (abi >= 3) return (1 << 15) - 1;
  if (abi >= 2) return (1 << 14) - 1;
  return (1 << 13) - 1;
}

/** Sets no_new_privs on this thread: what it execs, and everything below, can never gain privileges. */
export function setNoNewPrivs(): void {
  if (load().prctl(PR_SET_NO_NEW_PRIVS, 1n, 0n, 0n, 0n) !== 0) throw new Error("prctl(PR_SET_NO_NEW_PRIVS) failed");
}

/**
 * Restricts this thread (and what it execs) to the rules: landlock_create_ruleset, one
 * landlock_add_rule per path, landlock_restrict_self. no_new_privs must already be set.
 */
export function restrictSelf(rules: readonly LandlockRule[], abi: number): void {
  const c = load();
  const handled = handledAccess(abi);
  // struct landlock_ruleset_attr { u64 handled_access_fs; }: the filesystem part alone, which every ABI takes.
  const attr = new BigUint64Array([BigInt(handled)]);
  const ruleset = Number(c.syscall(SYS_LANDLOCK_CREATE_RULESET, BigInt(ptr(attr)), 8n, 0n, 0n));
  if (ruleset < 0) throw new Error(`landlock_create_ruleset failed (errno ${errno(c)})`);
  try {
    // struct landlock_path_beneath_attr { u64 allowed_access; s32 parent_fd; } __attribute__((packed))
    const beneath = new Uint8Array(16);
    const view = new DataView(beneath.buffer);
    for (const rule of rules) {
      const fd = c.open(cString(rule.path), O_PATH | O_CLOEXEC | O_NOFOLLOW);
      // An entry that went away since it was listed needs no rule.
      if (fd < 0) continue;
      try {
        const allowed = rule.access === "list" ? ACCESS_READ_DIR : rule.directory ? handled : handled & FILE_ACCESS;
        view.setBigUint64(0, BigInt(allowed), true);
        view.setInt32(8, fd, true);
        if (Number(c.syscall(SYS_LANDLOCK_ADD_RULE, BigInt(ruleset), BigInt(LANDLOCK_RULE_PATH_BENEATH), BigInt(ptr(beneath)), 0n)) !== 0)
          throw new Error(`landlock_add_rule ${rule.path} failed (errno ${errno(c)})`);
      } finally {
        c.close(fd);
      }
    }
    if (Number(c.syscall(SYS_LANDLOCK_RESTRICT_SELF, BigInt(ruleset), 0n, 0n, 0n)) !== 0)
      throw new Error(`landlock_restrict_self failed (errno ${errno(c)})`);
  } finally {
    c.close(ruleset);
  }
}

function errno(c: Libc): number {
  const location = c.__errno_location();
  return location ? read.i32(location, 0) : -1;
}
