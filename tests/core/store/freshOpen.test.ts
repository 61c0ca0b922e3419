import { afterAll, afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { BUN } from "../../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";
import { waitFor } from "../../support/waitFor.ts";

const OPENER = join(import.meta.dir, "fixtures", "freshOpener.ts");
const PROCESSES = 10;
const ROUNDS = 50;
const openers: Subprocess<"pipe", "pipe", "pipe">[] = [];

afterEach(() => {
  for (const child of openers.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});
afterAll(removeTempDirs);

function startOpener() {
  const child = Bun.spawn([BUN, OPENER], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  openers.push(child);
  const lines: string[] = [];
  let partial = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      const parts = (partial + decoder.decode(chunk, { stream: true })).split("\n");
      partial = parts.pop()!;
      lines.push(...parts);
    }
  })();
  return { child, lines, stderr: new Response(child.stderr).text() };
}

describe("many processes opening one fresh store at once", () => {
  test(`${PROCESSES} processes, ${ROUNDS} fresh files: every open succeeds (WAL switch and migrations included)`, async () => {
    const dir = makeTempDir();
    // Started once and fed one path per round, so each round is the opens alone, not process start-up.
    const processes = Array.from({ length: PROCESSES }, startOpener);
    await waitFor(
      "every opener to start",
      () => processes.every((p) => p.lines.includes("ready")) || processes.some((p) => p.child.exitCode !== null),
      {
        timeoutMs: 30_000,
      },
    );
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const path = join(dir, `round-${round}.db`);
      for (const p of processes) p.child.stdin.write(`${path}\n`);
      await Promise.all(processes.map((p) => p.child.stdin.flush()));
      const answers = await waitFor(
        `every opener to answer for round ${round}`,
        () => {
          if (processes.some((p) => p.child.exitCode !== null)) throw new Error("an opener exited");
          const found = processes.map((p) => p.lines.find((line) => line.endsWith(` ${path}`) || line.includes(` ${path} `)));
          return found.every((line) => line !== undefined) && (found as string[]);
        },
        { timeoutMs: 30_000, intervalMs: 5 },
      );
      failures.push(...answers.filter((line) => !line.startsWith("ok ")));
    }
    for (const p of processes) p.child.stdin.end();
    const codes = await Promise.all(processes.map((p) => p.child.exited));
    expect(failures).toEqual([]);
    expect(codes).toEqual(Array(PROCESSES).fill(0));
    expect(await Promise.all(processes.map((p) => p.stderr))).toEqual(Array(PROCESSES).fill(""));

    const last = new Database(join(dir, `round-${ROUNDS - 1}.db`), { readonly: true, strict: true });
    expect(last.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()!.journal_mode).toBe("wal");
    expect(last.query<{ n: number }, []>("SELECT count(*) AS n FROM schema_migrations").get()!.n).toBe(1);
    last.close();
  }, 90_000);
});
