import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DebugSidecar } from "../../src/agent/debugSidecar.ts";
import { SessionChannels } from "../../src/agent/sessionChannels.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(() => removeTempDirs());

describe("session channels", () => {
  test("turns that follow each other faster than a sidecar closes share one writer: nothing lost, no file over its cap", async () => {
    const dir = makeTempDir("agentd-channels-");
    const logger = createLogger("test.channels");
    const maxBytes = 4096;
    const channels = new SessionChannels(
      (sessionId) => new DebugSidecar({ dir, sessionId, maxBytes, keep: 50, secrets: [], logger, batchMs: 0 }),
      logger,
    );
    // Each turn writes and is released at once: its sidecar is still writing out when the next turn starts.
    for (let turn = 0; turn < 20; turn++) {
      channels.get("s1").sidecar!.write("turn", { turn, text: "x".repeat(1500) });
      channels.release("s1");
    }
    await channels.closeAll();
    const files = readdirSync(dir).filter((name) => name.startsWith("session_s1.debug.jsonl"));
    const turns = files
      .flatMap((name) => readFileSync(join(dir, name), "utf8").split("\n"))
      .filter((line) => line.startsWith("{"))
      .map((line) => (JSON.parse(line) as { turn: number }).turn)
      .sort((a, b) => a - b);
    expect(turns).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // A record starts a new file once the current one is full, so no file holds more than the cap plus one record.
    for (const name of files) expect(readFileSync(join(dir, name)).length).toBeLessThan(maxBytes + 4096);
  });
});
