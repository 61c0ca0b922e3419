import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Silence } from "../../src/watchdog/index.ts";
import { api, personHeaders, startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// Every run is from a fresh, unrelated directory: the CLI finds the daemon through --data-dir's
// ready.json and must never create a store (or a .agentd) where it runs.
let daemon: DaemonProcess;
let dataDir: string;

beforeAll(async () => {
  await ensureBinary();
  dataDir = join(makeTempDir("agentd-silence-daemon-"), "data");
  mkdirSync(dataDir);
  // A check named "db", so the daemon knows the name.
  daemon = await startDaemon({
    dataDir,
    config: { watchdog: { checks: [{ type: "tcp", name: "db", port: 1, interval_s: 3600 }] } },
  });
}, 300_000);

afterEach(async () => {
  const { silences } = await api<{ silences: Silence[] }>(daemon.url, "/api/incidents/silences");
  for (const s of silences)
    await fetch(`${daemon.url}/api/incidents/silences/${s.id}`, { method: "DELETE", headers: personHeaders(daemon.url) });
});

afterAll(async () => {
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

/** A fresh working directory and HOME, unrelated to the daemon's. */
function freshHome(): { home: string; dataDir: string } {
  return { home: makeTempDir("agentd-silence-"), dataDir };
}

function silence(home: string, daemonDir: string, ...args: string[]) {
  return runAgentd(["silence", ...args, "--data-dir", daemonDir], { cwd: home, env: { HOME: home } }).then((result) => {
    // Nothing is ever created where the CLI runs.
    expect(readdirSync(home)).toEqual([]);
    return result;
  });
}

async function storedSilences(_dataDir: string): Promise<Silence[]> {
  return (await api<{ silences: Silence[] }>(daemon.url, "/api/incidents/silences")).silences;
}

describe("agentd silence", () => {
  test("add with a duration and --reason, list it, clear it", async () => {
    const { home, dataDir } = freshHome();
    const before = Date.now();
    const added = await silence(home, dataDir, "db", "30m", "--reason", "migrating the database");
    const after = Date.now();
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    const match = /^Silenced db until (\S+) \(#(\d+)\)\.\n$/.exec(added.stdout);
    expect(match).not.toBeNull();
    const until = Date.parse(match![1]!);
    expect(until).toBeGreaterThanOrEqual(before + 30 * 60_000 - 1000);
    expect(until).toBeLessThanOrEqual(after + 30 * 60_000 + 1000);
    const id = Number(match![2]);

    const [stored] = await storedSilences(dataDir);
    expect(stored).toMatchObject({ id, target: "db", reason: "migrating the database" });
    expect(new Date(stored!.until).toISOString()).toBe(match![1]!);

    const listed = await silence(home, dataDir, "--list");
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(`#${id} db until ${match![1]} — migrating the database\n`);

    const cleared = await silence(home, dataDir, "--clear", String(id));
    expect(cleared.stderr).toBe("");
    expect(cleared.code).toBe(0);
    expect(cleared.stdout).toBe(`Silence #${id} removed.\n`);
    expect(await storedSilences(dataDir)).toEqual([]);

    const empty = await silence(home, dataDir, "--list");
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe("No active silences.\n");
  }, 120_000);

  test("--json prints the silence added and the active list", async () => {
    const { home, dataDir } = freshHome();
    const added = await silence(home, dataDir, "upstream.server_error", "90s", "--json");
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    const silenceAdded = JSON.parse(added.stdout) as Silence;
    expect(silenceAdded).toMatchObject({ target: "upstream.server_error", reason: null });
    expect(silenceAdded.until - silenceAdded.created_at).toBe(90_000);

    await silence(home, dataDir, "check:db", "2h");
    const listed = await silence(home, dataDir, "--list", "--json");
    expect(listed.code).toBe(0);
    // Ordered by when they end.
    expect((JSON.parse(listed.stdout) as Silence[]).map((s) => s.target)).toEqual(["upstream.server_error", "check:db"]);
  }, 120_000);

  test("a bad duration: exit 2 with a clear message, nothing stored", async () => {
    const { home, dataDir } = freshHome();
    for (const duration of ["soon", "10d", "5min", "1.5.2s"]) {
      const result = await silence(home, dataDir, "db", duration);
      expect({ duration, code: result.code, stdout: result.stdout }).toEqual({ duration, code: 2, stdout: "" });
      expect(result.stderr).toBe(
        `agentd silence: Cannot read "${duration}" as a duration: expected a number with ms, s, m or h (e.g. 30s)\nRun 'agentd silence --help' for usage.\n`,
      );
    }
    expect(await storedSilences(dataDir)).toEqual([]);
  }, 120_000);

  test("a zero duration is a usage error too (exit 2), and stores nothing", async () => {
    const { home, dataDir } = freshHome();
    const result = await silence(home, dataDir, "db", "0s");
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("duration");
    expect(result.code).toBe(2);
    expect(await storedSilences(dataDir)).toEqual([]);
  }, 60_000);

  test("wrong usage exits 2 with a message and a hint", async () => {
    const { home, dataDir } = freshHome();
    const cases: Array<[string[], string]> = [
      [["db"], "expected a target and a duration, e.g. 'agentd silence db 30m'"],
      [[], "expected a target and a duration, e.g. 'agentd silence db 30m'"],
      [["--list", "db"], 'unexpected argument "db"'],
      [["--clear", "x"], 'Cannot use "x" as --clear: expected a silence id'],
    ];
    for (const [args, message] of cases) {
      const result = await silence(home, dataDir, ...args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(result.stderr).toBe(`agentd silence: ${message}\nRun 'agentd silence --help' for usage.\n`);
    }
  }, 120_000);

  test("an unknown name is refused with the nearest known one; a known check, signal or component is taken", async () => {
    const { home } = freshHome();
    const typo = await silence(home, dataDir, "worker.crashd", "10m");
    expect(typo.code).toBe(1);
    expect(typo.stdout).toBe("");
    expect(typo.stderr).toStartWith(
      `agentd silence: Nothing named "worker.crashd" reports to the watchdog; did you mean "worker.crashed"?`,
    );
    const unknown = await silence(home, dataDir, "nosuchcheck", "10m");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toStartWith(`agentd silence: Nothing named "nosuchcheck" reports to the watchdog.`);
    expect(await storedSilences(dataDir)).toEqual([]);
    for (const name of ["db", "worker", "provider:openai"]) expect((await silence(home, dataDir, name, "1m")).code).toBe(0);
    expect((await storedSilences(dataDir)).map((s) => s.target).sort()).toEqual(["db", "provider:openai", "worker"]);
  }, 120_000);

  test("no daemon: exit 2 and a clear line; no store is created", async () => {
    const home = makeTempDir("agentd-silence-none-");
    const missing = join(home, "nowhere");
    const result = await runAgentd(["silence", "db", "10m", "--data-dir", missing, "--url", "http://127.0.0.1:9"], {
      cwd: home,
      env: { HOME: home },
    });
    expect(result.code).toBe(5);
    expect(result.stderr).toStartWith("Cannot reach agentd at http://127.0.0.1:9");
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(home)).toEqual([]);
  }, 60_000);

  test("clearing a silence that does not exist: exit 1 and one clear line", async () => {
    const { home, dataDir } = freshHome();
    const result = await silence(home, dataDir, "--clear", "42");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("agentd silence: No silence with id 42\n");
  }, 60_000);
});
