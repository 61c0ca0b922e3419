import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { runAgentd } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

let upstream: ScriptedUpstream;
let daemon: DaemonProcess;
let dir: string;

beforeAll(async () => {
  upstream = startScriptedUpstream();
  dir = makeTempDir("agentd-providers-");
  daemon = await startDaemon({ dataDir: dir, config: { providers: [{ name: "scripted", base_url: upstream.url, models: ["*"] }] } });
});

afterAll(async () => {
  await daemon.stop();
  await upstream.close();
  removeTempDirs();
});

const providers = (...args: string[]) => runAgentd(["providers", ...args, "--url", daemon.url]);

describe("agentd providers", () => {
  test("lists the configured providers with their state", async () => {
    const listed = await providers();
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^NAME +STATE +BREAKER/);
    expect(listed.stdout).toMatch(/\nscripted +ok +closed/);
    const json = await providers("list", "--json");
    expect(JSON.parse(json.stdout)).toMatchObject([{ name: "scripted", state: "ok" }]);
  });

  test("shows a quirk the proxy learned from a 400, and clears it", async () => {
    upstream.enqueue(
      {
        kind: "http_error",
        status: 400,
        body: JSON.stringify({ error: { message: "Unrecognized request argument supplied: parallel_tool_calls" } }),
      },
      { kind: "text", text: "ok" },
    );
    const answer = await fetch(`${daemon.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], parallel_tool_calls: false }),
    });
    expect(answer.status).toBe(200);
    const quirks = await providers("quirks");
    expect(quirks.code).toBe(0);
    expect(quirks.stdout).toMatch(/scripted +parallel_tool_calls/);
    const cleared = await providers("quirks", "--clear", "--provider", "scripted");
    expect(cleared.stdout).toBe("cleared 1 quirk(s)\n");
    expect((await providers("quirks")).stdout).toBe("no quirks learned\n");
  });

  test("wrong usage exits 2 with a clear message", async () => {
    const wrong = await providers("bogus");
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('unexpected argument "bogus"');
    const misplaced = await providers("list", "--clear");
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain("--clear and --provider only apply");
  });
});
