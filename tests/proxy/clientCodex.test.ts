import { afterEach, describe, expect, test } from "bun:test";
import { removeTempDirs } from "../support/tempDir.ts";
import { type ClientPath, startPath, WIRES } from "./clientPaths.ts";
import { readIn, runCodex } from "./codexRun.ts";

/**
 * The Codex CLI (0.169, which speaks only the Responses API) through agentd: on a chat-only
 * upstream agentd's translation is its only way in. Codex's shell tool is `exec_command` ({cmd}).
 */

let path: ClientPath | undefined;

afterEach(async () => {
  await path?.close();
  path = undefined;
  removeTempDirs();
});

const shell = (cmd: string) => ({ name: "exec_command", arguments: JSON.stringify({ cmd }) });

function completed(run: Awaited<ReturnType<typeof runCodex>>): void {
  expect(run.events.map((e) => e.type)).toContain("turn.completed");
  expect(run.events.some((e) => e.type === "turn.failed")).toBe(false);
  expect(run.exitCode).toBe(0);
  // Every config key docs/http-api.md documents is one Codex knows.
  expect(JSON.stringify(run.events)).not.toContain("unrecognized configuration");
}

for (const wire of WIRES) {
  describe(`Codex CLI, ${wire} upstream`, () => {
    test("a shell tool round trip: the command runs and the turn completes", async () => {
      path = startPath(wire);
      path.up.enqueue({ kind: "text", toolCalls: [shell("echo agentd-ran > marker.txt")] }, { kind: "text", text: "Done." });
      const run = await runCodex({ baseURL: path.baseURL, prompt: "write the marker" });
      completed(run);
      expect(run.items("command_execution")).toMatchObject([{ status: "completed", exit_code: 0 }]);
      expect(readIn(run, "marker.txt")).toBe("agentd-ran\n");
      expect(run.items("agent_message").at(-1)!.text).toBe("Done.");
      const [first, second] = path.up.completionRequests();
      const firstTools = JSON.stringify(first!.body.tools);
      expect(firstTools).toContain('"exec_command"');
      // The command's output went back to the model, paired with its call.
      expect(JSON.stringify(second!.body)).toContain("call_1");
    });

    test("parallel tool calls: both commands run, both results go back", async () => {
      path = startPath(wire);
      path.up.enqueue(
        { kind: "text", interleaveCalls: true, toolCalls: [shell("echo one > a.txt"), shell("echo two > b.txt")] },
        { kind: "text", text: "Both done." },
      );
      const run = await runCodex({ baseURL: path.baseURL, prompt: "write both" });
      completed(run);
      expect(run.items("command_execution")).toHaveLength(2);
      expect(readIn(run, "a.txt") + readIn(run, "b.txt")).toBe("one\ntwo\n");
      const second = JSON.stringify(path.up.completionRequests()[1]!.body);
      expect(second).toContain("call_1");
      expect(second).toContain("call_2");
    });

    test("reasoning from the upstream is shown as reasoning", async () => {
      path = startPath(wire);
      path.up.enqueue({ kind: "text", reasoning: "The user wants a greeting.", text: "Hello." });
      const run = await runCodex({
        baseURL: path.baseURL,
        prompt: "greet me",
        config: ['model_reasoning_summary = "detailed"', 'model_reasoning_effort = "medium"'],
      });
      completed(run);
      const shown = run.items("reasoning").map((item) => item.text);
      if (wire === "chat") expect(shown).toEqual(["The user wants a greeting."]);
      // A Responses upstream's raw reasoning_text is its own; Codex shows summaries, which this one sends none of.
      else expect(run.items("agent_message").at(-1)!.text).toBe("Hello.");
    });
  });
}

describe("Codex CLI compaction, chat upstream", () => {
  test("a turn that outgrows the auto-compact limit compacts through agentd and goes on", async () => {
    path = startPath("chat");
    path.up.enqueue(
      { kind: "text", toolCalls: [shell("echo big")], usage: { prompt_tokens: 5000, completion_tokens: 10 } },
      { kind: "text", text: "Summary: ran echo big.", usage: { prompt_tokens: 100, completion_tokens: 10 } },
      { kind: "text", text: "Finished after compaction.", usage: { prompt_tokens: 100, completion_tokens: 10 } },
    );
    const run = await runCodex({
      baseURL: path.baseURL,
      prompt: "run echo big",
      config: ["model_auto_compact_token_limit = 2000", "model_context_window = 100000"],
    });
    completed(run);
    const requests = path.up.completionRequests().map((r) => JSON.stringify(r.body.messages));
    expect(requests).toHaveLength(3);
    // Codex compacts on its own for a custom provider: a summarisation turn, then the summary replaces the history.
    expect(requests[1]).toContain("CONTEXT CHECKPOINT COMPACTION");
    expect(requests[2]).toContain("Summary: ran echo big.");
    expect(requests[2]).not.toContain("CONTEXT CHECKPOINT COMPACTION");
    expect(run.items("agent_message").at(-1)!.text).toBe("Finished after compaction.");
  });
});

describe("Codex CLI faults, chat upstream", () => {
  test("a rate-limited upstream fails the turn with Codex's own error, after a bounded number of attempts", async () => {
    path = startPath("chat");
    path.up.setDefault({ kind: "http_error", status: 429, message: "slow down" });
    const run = await runCodex({ baseURL: path.baseURL, prompt: "hi" });
    expect(run.exitCode).not.toBe(0);
    const failed = run.events.find((e) => e.type === "turn.failed");
    expect(failed?.error?.message).toContain("429");
    // agentd's x-request-id is what Codex quotes.
    expect(failed?.error?.message).toMatch(/request id: req_[0-9a-f]{32}/);
    expect(path.up.completionRequests().length).toBeLessThanOrEqual(4);
  });
});
