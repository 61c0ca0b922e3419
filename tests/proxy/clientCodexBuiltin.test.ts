import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { ensureBinary } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { type ClientPath, startPath, WIRES } from "./clientPaths.ts";
import { type CodexRun, readIn, runCodex } from "./codexRun.ts";

/**
 * Codex's built-in `openai` provider pointed at agentd (`openai_base_url`): it speaks the Responses
 * API over a WebSocket on GET /v1/responses first, and falls back to HTTPS only after five failed
 * connects ("Reconnecting… n/5"). Through agentd it must connect at once and never fall back.
 */

let path: ClientPath | undefined;
let daemon: DaemonProcess | undefined;
let upstream: ScriptedUpstream | undefined;

afterEach(async () => {
  await path?.close();
  await daemon?.stop();
  await upstream?.close();
  path = daemon = upstream = undefined;
  removeTempDirs();
}, 60_000);

const shell = (cmd: string) => ({ name: "exec_command", arguments: JSON.stringify({ cmd }) });

function completedOverSocket(run: CodexRun, requests: readonly string[]): void {
  expect(run.events.map((e) => e.type)).toContain("turn.completed");
  expect(run.events.some((e) => e.type === "turn.failed")).toBe(false);
  expect(run.exitCode).toBe(0);
  expect(JSON.stringify(run.events) + run.stderr).not.toContain("Reconnecting");
  // One connection, every turn on it: no HTTP fallback.
  expect(requests.filter((r) => r === "GET /v1/responses websocket")).toHaveLength(1);
  expect(requests).not.toContain("POST /v1/responses");
}

for (const wire of WIRES) {
  describe(`Codex CLI built-in provider over the WebSocket, ${wire} upstream`, () => {
    test("a shell tool round trip connects on the first try and keeps the whole conversation", async () => {
      path = startPath(wire);
      path.up.enqueue({ kind: "text", toolCalls: [shell("echo agentd-ran > marker.txt")] }, { kind: "text", text: "Done." });
      const run = await runCodex({ baseURL: path.baseURL, prompt: "write the marker", builtin: true });
      completedOverSocket(run, path.h.requests);
      expect(readIn(run, "marker.txt")).toBe("agentd-ran\n");
      expect(run.items("agent_message").at(-1)!.text).toBe("Done.");
      // The prewarm frame (generate: false) never reaches the upstream: two model calls, not three.
      const upstream = path.up.completionRequests();
      expect(upstream).toHaveLength(2);
      // Codex sent only the tool output after previous_response_id; the upstream got the whole conversation.
      const second = JSON.stringify(upstream[1]!.body);
      expect(second).toContain("write the marker");
      expect(second).toContain("call_1");
      expect(second).toContain("agentd-ran");
    });
  });
}

describe("Codex CLI built-in provider compaction, chat upstream", () => {
  test("compaction_trigger is answered by the chat model's summary as a compaction item, which later turns read back", async () => {
    path = startPath("chat");
    path.up.enqueue(
      { kind: "text", toolCalls: [shell("echo big")], usage: { prompt_tokens: 5000, completion_tokens: 10 } },
      { kind: "text", text: "Summary: ran echo big.", usage: { prompt_tokens: 100, completion_tokens: 10 } },
      { kind: "text", text: "Finished after compaction.", usage: { prompt_tokens: 100, completion_tokens: 10 } },
    );
    const run = await runCodex({
      baseURL: path.baseURL,
      prompt: "run echo big",
      builtin: true,
      config: ["model_auto_compact_token_limit = 2000", "model_context_window = 100000"],
    });
    completedOverSocket(run, path.h.requests);
    expect(run.items("agent_message").at(-1)!.text).toBe("Finished after compaction.");
    const [, compaction, after] = path.up.completionRequests().map((r) => r.body);
    expect(path.up.completionRequests()).toHaveLength(3);
    // The summary request: the whole conversation, the tool's output included, and no tool may be called.
    expect(JSON.stringify(compaction!.messages)).toContain("Compact this conversation now");
    expect(JSON.stringify(compaction!.messages)).toContain("call_1");
    expect(compaction!.tool_choice).toBe("none");
    expect(compaction!.stream).toBeUndefined();
    // Codex replaced its history with the compaction item; the chat model reads the summary in its place.
    const afterText = JSON.stringify(after!.messages);
    expect(afterText).toContain("Summary: ran echo big.");
    expect(afterText).not.toContain("Compact this conversation now");
    expect(afterText).not.toContain("call_1");
  });
});

describe("Codex CLI built-in provider against ./agentd", () => {
  test("the worker upgrades GET /v1/responses after its checks: no reconnect, the request recorded", async () => {
    await ensureBinary();
    upstream = startScriptedUpstream({ wires: ["chat"] });
    upstream.enqueue({ kind: "text", toolCalls: [shell("echo via-binary > marker.txt")] }, { kind: "text", text: "Done." });
    const dataDir = join(makeTempDir("agentd-codex-ws-"), "data");
    mkdirSync(dataDir);
    daemon = await startDaemon({ dataDir, config: { providers: [{ name: "chat", base_url: upstream.url, wire: "chat" }] } });
    const run = await runCodex({ baseURL: `${daemon.url}/v1`, prompt: "write the marker", builtin: true });
    expect(run.events.map((e) => e.type)).toContain("turn.completed");
    expect(run.exitCode).toBe(0);
    expect(JSON.stringify(run.events) + run.stderr).not.toContain("Reconnecting");
    expect(readIn(run, "marker.txt")).toBe("via-binary\n");
    expect(upstream.completionRequests()).toHaveLength(2);
    expect(daemon.lines.filter((r) => r.event === "proxy.request" && r.outcome === "ok")).toHaveLength(2);
  }, 180_000);
});
