import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

test("a subreaper adopts what leaves its tree, reaps it, leaves its own children's status to Bun, and ends the rest", async () => {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures", "orphanReaperChild.ts")], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect({ code, err }).toEqual({ code: 0, err: "" });
  expect(out).toContain('"event":"process.orphans_ended"');
  // Log lines (the reaper's process.orphans_ended) come first.
  const result = out.split("\n").find((line) => line.startsWith("RESULT "));
  expect(JSON.parse(result?.slice("RESULT ".length) ?? "null")).toEqual({
    ownExit: 7,
    adoptedWhileRunning: 2,
    reaped: 2,
    ended: 1,
    left: 0,
  });
}, 30_000);

test("every child agentd spawns with Bun is tracked, so the supervisor's reaper never takes its exit status", () => {
  const untracked: string[] = [];
  for (const file of new Bun.Glob("src/**/*.ts").scanSync({ cwd: join(import.meta.dir, "..", "..", "..") })) {
    const text = readFileSync(join(import.meta.dir, "..", "..", "..", file), "utf8");
    for (const match of text.matchAll(/Bun\.spawn(Sync)?\(/g)) {
      if (match[1] === "Sync") continue; // Bun waits for it before returning: nothing to reap later.
      if (!/trackChild\(\s*$/.test(text.slice(Math.max(0, match.index - 40), match.index))) untracked.push(`${file}:${match.index}`);
    }
  }
  expect(untracked).toEqual([]);
});
