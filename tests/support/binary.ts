import type { Subprocess } from "bun";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { tokenEnvFor } from "./daemonTokens.ts";
import { makeTempDir } from "./tempDir.ts";

export const PROJECT_ROOT = resolve(import.meta.dir, "..", "..");
/** AGENTD_BIN names a prebuilt binary to test instead (never rebuilt); default ./agentd. */
export const AGENTD = process.env.AGENTD_BIN ? resolve(process.env.AGENTD_BIN) : join(PROJECT_ROOT, "agentd");
export const BUN = join(PROJECT_ROOT, "node_modules", ".bin", "bun");

function newestSourceMtime(): number {
  let newest = 0;
  const visit = (path: string) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const path of ["main.ts", "package.json", "src", "build"]) visit(join(PROJECT_ROOT, path));
  return newest;
}

let building: Promise<string> | undefined;

/** The `build` script of package.json (what README and CI run), writing to `outfile` instead. */
function buildCommand(outfile: string): string[] {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { scripts: { build: string } };
  const words = pkg.scripts.build.trim().split(/\s+/);
  if (words[0] !== "bun" || !words.includes("--outfile"))
    throw new Error(`Cannot use the build script "${pkg.scripts.build}": expected "bun SCRIPT … --outfile FILE"`);
  return [BUN, ...words.slice(1).map((word, i, all) => (all[i - 1] === "--outfile" ? outfile : word))];
}

/**
 * The compiled ./agentd, built (with the same command as `npm run build`) when it is missing or
 * older than the sources. Built under a temporary name and renamed, so a binary another test is
 * running is never overwritten in place. As root, the tests run a copy any user may reach, as on a
 * server (/usr/local/bin): agentd then splits into a root monitor and a worker as its service user
 * wherever the checkout lies (`mktemp -d` makes 0700, a CI checkout may be open), not only in some.
 */
export function ensureBinary(): Promise<string> {
  building ??= compiledBinary().then((binary) => (process.getuid?.() === 0 ? reachableCopy(binary) : binary));
  return building;
}

/**
 * One copy per build, shared by every test file and worker of a run (bun test --parallel runs each
 * file in a fresh module scope, so a per-process copy would be made once per file): a directory
 * named by the binary's size and time, filled under a temporary name and renamed, so a file that
 * sees it sees it whole. A hard link where /tmp is on the checkout's filesystem (no space taken),
 * else a copy. Copies of other builds untouched for an hour are removed.
 */
function reachableCopy(binary: string): string {
  const info = statSync(binary);
  const dir = join(tmpdir(), `${SHARED_COPY_PREFIX}${info.size}-${Math.trunc(info.mtimeMs)}`);
  const copy = join(dir, "agentd");
  if (existsSync(copy)) return copy;
  const building = mkdtempSync(`${dir}.part-`);
  chmodSync(building, 0o755);
  try {
    linkSync(binary, join(building, "agentd"));
  } catch {
    copyFileSync(binary, join(building, "agentd"));
    chmodSync(join(building, "agentd"), 0o755);
  }
  try {
    renameSync(building, dir);
  } catch (error) {
    // Another file or worker made it first: theirs is whole, this one goes.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(copy)) throw error;
  }
  pruneOtherCopies(dir);
  return copy;
}

const SHARED_COPY_PREFIX = "agentd-test-bin-";
const STALE_COPY_MS = 3600_000;

function pruneOtherCopies(kept: string): void {
  for (const entry of readdirSync(tmpdir())) {
    const path = join(tmpdir(), entry);
    if (!entry.startsWith(SHARED_COPY_PREFIX) || path === kept) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_COPY_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed meanwhile by another run's pruning.
    }
  }
}

function compiledBinary(): Promise<string> {
  return (async () => {
    if (process.env.AGENTD_BIN) {
      if (!existsSync(AGENTD)) throw new Error(`AGENTD_BIN=${AGENTD} does not exist`);
      return AGENTD;
    }
    if (existsSync(AGENTD) && statSync(AGENTD).mtimeMs >= newestSourceMtime()) return AGENTD;
    const temp = join(PROJECT_ROOT, `agentd.build-${process.pid}`);
    const build = Bun.spawn(buildCommand(temp), { cwd: PROJECT_ROOT, stdout: "pipe", stderr: "pipe" });
    const [code, stdout, stderr] = await Promise.all([build.exited, new Response(build.stdout).text(), new Response(build.stderr).text()]);
    if (code !== 0) {
      rmSync(temp, { force: true });
      rmSync(`${temp}.map`, { force: true });
      throw new Error(`Cannot build ./agentd (exit ${code}):\n${stdout}\n${stderr}`);
    }
    if (existsSync(`${temp}.map`)) renameSync(`${temp}.map`, `${AGENTD}.map`);
    renameSync(temp, AGENTD);
    return AGENTD;
  })();
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  /** Another copy of the binary to run (default: ensureBinary's). */
  binary?: string;
}

/** Runs ./agentd to completion (killed by pid past the timeout) and returns its exit code and output. */
export async function runAgentd(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const binary = await ensureBinary();
  const child = Bun.spawn([binary, ...args], {
    cwd: options.cwd,
    env: cleanEnv(tokenEnvFor(args, options.env)),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
  try {
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** Starts ./agentd and returns the running child; the caller stops it by pid (see stopChild). */
export async function spawnAgentd(args: string[], options: RunOptions = {}): Promise<Subprocess<"ignore", "pipe", "pipe">> {
  const binary = options.binary ?? (await ensureBinary());
  return Bun.spawn([binary, ...args], {
    cwd: options.cwd,
    env: cleanEnv(tokenEnvFor(args, options.env)),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/**
 * The environment for a child: the test's own, minus variables that would make agentd pick up
 * the developer's config, data dir or daemon, plus the overrides (undefined removes a variable).
 */
export function cleanEnv(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of [
    "AGENTD_CONFIG",
    "AGENTD_DATA_DIR",
    "AGENTD_URL",
    "AGENTD_TOKEN",
    "AGENTD_SUPERVISOR_PID",
    "AGENTD_WORKER_RESTARTS",
    // The supervisor's own exec (src/daemon/supervisorJit.ts) is skipped when the option is set.
    "BUN_JSC_useDFGJIT",
    "AGENTD_SUPERVISOR_JIT",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
  ])
    delete env[name];
  Object.assign(env, overrides);
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** SIGTERM, then SIGKILL past the grace period; resolves once the child has exited. */
export async function stopChild(child: Subprocess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await child.exited;
  clearTimeout(timer);
}

/**
 * The compiled binary where any user may run it, for tests that start agentd as another user: the
 * checkout may sit in a directory only its owner can enter (`mktemp -d` makes 0700).
 */
export async function binaryForAnyUser(): Promise<string> {
  const binary = await ensureBinary();
  if (process.getuid?.() === 0) return binary;
  const dir = makeTempDir("agentd-bin-");
  chmodSync(dir, 0o755);
  const copy = join(dir, "agentd");
  copyFileSync(binary, copy);
  chmodSync(copy, 0o755);
  return copy;
}
