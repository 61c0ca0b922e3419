import { describe, expect, test } from "bun:test";
import type { Logger, LogFields } from "../../../src/core/log/index.ts";
import { failureCount, runInBackground } from "../../../src/core/process/index.ts";

function recording(): Logger & { entries: Array<{ level: string; event: string } & LogFields> } {
  const entries: Array<{ level: string; event: string } & LogFields> = [];
  const write = (level: string) => (event: string, fields?: LogFields) => void entries.push({ level, event, ...fields });
  const logger = { entries, debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error"), child: () => logger };
  return logger;
}

describe("runInBackground", () => {
  test("a rejection is logged with its context and counted; done still resolves", async () => {
    const log = recording();
    const before = failureCount("background");
    const task = runInBackground("sweep", () => Promise.reject(new Error("disk gone")), { session: "s1" }, log);
    await expect(task.done).resolves.toBeUndefined();
    expect(failureCount("background")).toBe(before + 1);
    expect(log.entries).toEqual([
      expect.objectContaining({ level: "error", event: "background.failed", task: "sweep", session: "s1", error: new Error("disk gone") }),
    ]);
  });

  test("a synchronous throw is caught the same way; a success logs nothing", async () => {
    const log = recording();
    const before = failureCount("background");
    await runInBackground(
      "sync",
      () => {
        throw new Error("at once");
      },
      {},
      log,
    ).done;
    let ran = false;
    await runInBackground(
      "fine",
      async () => {
        ran = true;
      },
      {},
      log,
    ).done;
    expect(ran).toBe(true);
    expect(failureCount("background")).toBe(before + 1);
    expect(log.entries.map((e) => e.task)).toEqual(["sync"]);
  });
});
