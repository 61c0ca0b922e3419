import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN } from "../support/binary.ts";

// The model SDK and the shell parser are loaded at first use: an idle worker (a proxy that never
// runs a turn or judges a command) does not hold them. Measured in its own process (bench/startup.ts for the bytes).
test("an idle worker holds neither openai nor web-tree-sitter; each loads at its first use", async () => {
  const child = Bun.spawn([BUN, join(import.meta.dir, "fixtures", "idleWorkerModules.ts")], { stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
  const line = stdout.split("\n").find((text) => text.startsWith('{"modules":'));
  expect(line).toBeDefined();
  const { modules: report } = JSON.parse(line ?? "{}") as {
    modules: {
      idle: { openai: number; webTreeSitter: number };
      afterParser: { openai: number; webTreeSitter: number; parsed: string };
      afterClient: { openai: number; webTreeSitter: number; once: boolean; hasChat: boolean };
    };
  };
  expect(report.idle).toEqual({ openai: 0, webTreeSitter: 0 });
  expect(report.afterParser.webTreeSitter).toBeGreaterThan(0);
  expect(report.afterParser.openai).toBe(0);
  expect(report.afterParser.parsed).toBe("program");
  expect(report.afterClient.openai).toBeGreaterThan(0);
  expect(report.afterClient.once).toBe(true);
  expect(report.afterClient.hasChat).toBe(true);
});
