import { afterAll, afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { BUN } from "../../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";
import { waitFor } from "../../support/waitFor.ts";

const WRITER = join(import.meta.dir, "fixtures", "concurrentWriter.ts");
const HOLDER = join(import.meta.dir, "fixtures", "lockHolder.ts");
const ROWS_EACH = 3000;
const children: Subprocess<"pipe", "pipe", "pipe">[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});
afterAll(removeTempDirs);

function startChild(args: string[]) {
  const child = Bun.spawn([BUN, ...args], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  children.push(child);
  let stdout = "";
  const stdoutDone = (async () => {
    for await (const chunk of child.stdout) stdout += new TextDecoder().decode(chunk);
  })();
  const stderr = new Response(child.stderr).text();
  return { child, stdout: () => stdout, stdoutDone, stderr };
}

const startWriter = (path: string, name: string) => startChild([WRITER, path, String(ROWS_EACH), name]);

async function send(child: Subprocess<"pipe", "pipe", "pipe">, text: string) {
  child.stdin.write(text);
  await child.stdin.flush();
}

describe("two processes on one store", () => {
  test("open a fresh store at once, then write thousands of rows concurrently without SQLITE_BUSY", async () => {
    const path = join(makeTempDir(), "agentd.db");
    const writers = [startWriter(path, "alpha"), startWriter(path, "beta")];
    await waitFor(
      "both writers to open the store",
      () => writers.every((w) => w.stdout().includes("ready")) || writers.some((w) => w.child.exitCode !== null),
      { timeoutMs: 60_000 },
    );
    for (const w of writers) await send(w.child, "go\n");
    const codes = await Promise.all(writers.map((w) => w.child.exited));
    await Promise.all(writers.map((w) => w.stdoutDone));
    const stderrs = await Promise.all(writers.map((w) => w.stderr));
    expect(stderrs.join("\n")).not.toMatch(/SQLITE_BUSY|database is locked/);
    expect(stderrs).toEqual(["", ""]);
    expect(codes).toEqual([0, 0]);
    expect(writers.map((w) => w.stdout())).toEqual(["ready\nwriting\ndone\n", "ready\nwriting\ndone\n"]);

    const db = new Database(path, { readonly: true, strict: true });
    const counts = db
      .query<{ component: string; n: number }, []>("SELECT component, count(*) AS n FROM events GROUP BY component ORDER BY component")
      .all();
    expect(counts).toEqual([
      { component: "alpha", n: ROWS_EACH },
      { component: "beta", n: ROWS_EACH },
    ]);
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM schema_migrations").get()!.n).toBe(1);
    db.close();
  }, 120_000);

  test("a writer that meets another process's open write transaction waits for it instead of failing", async () => {
    const path = join(makeTempDir(), "agentd.db");
    const writer = startWriter(path, "waiting");
    await waitFor("the writer to open the store", () => writer.stdout().includes("ready") || writer.child.exitCode !== null, {
      timeoutMs: 60_000,
    });
    const holder = startChild([HOLDER, path]);
    await waitFor("the lock holder to take the write lock", () => holder.stdout().includes("locked") || holder.child.exitCode !== null, {
      timeoutMs: 60_000,
    });
    expect(holder.stdout()).toBe("locked\n");
    await send(writer.child, "go\n");
    await waitFor("the writer to start writing", () => writer.stdout().includes("writing") || writer.child.exitCode !== null, {
      timeoutMs: 60_000,
    });
    // The writer's first insert now waits on the lock (busy_timeout); releasing it lets the writer go on.
    await send(holder.child, "release\n");
    const codes = await Promise.all([holder.child.exited, writer.child.exited]);
    const stderrs = await Promise.all([holder.stderr, writer.stderr]);
    expect(stderrs).toEqual(["", ""]);
    expect(codes).toEqual([0, 0]);

    const db = new Database(path, { readonly: true, strict: true });
    const holderId = db.query<{ id: number }, []>("SELECT id FROM events WHERE component = 'holder'").get()!.id;
    const writerFirst = db.query<{ id: number }, []>("SELECT min(id) AS id FROM events WHERE component = 'waiting'").get()!.id;
    expect(writerFirst).toBeGreaterThan(holderId);
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM events WHERE component = 'waiting'").get()!.n).toBe(ROWS_EACH);
    db.close();
  }, 120_000);
});
