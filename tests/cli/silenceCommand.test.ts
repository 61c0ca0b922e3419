import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { openStore } from "../../src/core/store/index.ts";
import { SilenceStore, type Silence } from "../../src/watchdog/index.ts";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

beforeAll(() => ensureBinary(), 300_000);
afterAll(removeTempDirs);

/** A home (also the working directory, so no developer config is read) with an empty data dir path in it. */
function freshHome(): { home: string; dataDir: string } {
  const home = makeTempDir("agentd-silence-");
  return { home, dataDir: join(home, "data") };
}

const silence = (home: string, dataDir: string, ...args: string[]) =>
  runAgentd(["silence", ...args, "--data-dir", dataDir], { cwd: home, env: { HOME: home } });

function storedSilences(dataDir: string): Silence[] {
  const db = openStore({ path: join(dataDir, "agentd.db"), migrations: allMigrations });
  try {
    return new SilenceStore(db).active();
  } finally {
    db.close();
  }
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

    const [stored] = storedSilences(dataDir);
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
    expect(storedSilences(dataDir)).toEqual([]);

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
    expect(existsSync(join(dataDir, "agentd.db"))).toBe(false);
  }, 120_000);

  test("a zero duration is a usage error too (exit 2), and stores nothing", async () => {
    const { home, dataDir } = freshHome();
    const result = await silence(home, dataDir, "db", "0s");
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("duration");
    expect(result.code).toBe(2);
    expect(existsSync(join(dataDir, "agentd.db"))).toBe(false);
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

  test("clearing a silence that does not exist: exit 1 and one clear line", async () => {
    const { home, dataDir } = freshHome();
    const result = await silence(home, dataDir, "--clear", "42");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("agentd silence: No silence with id 42\n");
  }, 60_000);
});
