/**
 * The real Claude Code CLI through agentd's /v1/messages to the scripted chat upstream: its Bash
 * tool run and the result sent back, parallel tool calls, thinking shown, and a 429 and a cut
 * stream surfacing as Claude Code's own errors after a bounded number of attempts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { removeTempDirs } from "../support/tempDir.ts";
import { runClaude } from "./claudeCodeRun.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

let upstream: ScriptedUpstream;
let harness: ProxyHarness;

afterEach(async () => {
  await harness?.close();
  await upstream?.close();
  removeTempDirs();
});

function setup(config: Record<string, unknown> = {}) {
  upstream = startScriptedUpstream({ wires: ["chat"] });
  // docs/http-api.md "Clients": Claude Code's model names mapped onto the provider's model.
  harness = startProxy({ providers: [{ name: "up", base_url: upstream.url, aliases: { "claude-*": "gpt-test" } }], config });
}

const bash = (id: string, command: string) => ({
  id,
  name: "Bash",
  arguments: JSON.stringify({ command, description: "Write a proof file" }),
});

describe("Claude Code through /v1/messages", () => {
  test("a turn that runs its Bash tool and gets the result back", async () => {
    setup();
    upstream.enqueue(
      { kind: "text", text: "Running it.", toolCalls: [bash("call_bash", "echo agentd-bash-ok > proof.txt && cat proof.txt")] },
      { kind: "text", text: "The file says agentd-bash-ok." },
    );
    const run = await runClaude({ baseURL: harness.url, prompt: "write proof.txt" });
    expect(run.exitCode).toBe(0);
    expect(readFileSync(join(run.workdir, "proof.txt"), "utf8")).toBe("agentd-bash-ok\n");
    expect(run.blocks("tool_use")[0]).toMatchObject({ id: "call_bash", name: "Bash" });
    expect(JSON.stringify(run.blocks("tool_result")[0])).toContain("agentd-bash-ok");
    expect(run.result).toMatchObject({ subtype: "success", is_error: false, result: "The file says agentd-bash-ok." });
    const [first, second] = upstream.completionRequests();
    expect(first!.body.model).toBe("gpt-test");
    expect(first!.body.stream).toBe(true);
    expect(first!.body.tools.map((t: any) => t.function.name)).toContain("Bash");
    const toolMessage = second!.body.messages.find((m: any) => m.role === "tool");
    expect(toolMessage).toMatchObject({ tool_call_id: "call_bash" });
    expect(toolMessage.content).toContain("agentd-bash-ok");
  }, 90_000);

  test("parallel tool calls: both run, both results go back in one request", async () => {
    setup();
    upstream.enqueue(
      {
        kind: "text",
        toolCalls: [bash("call_a", "echo one > a.txt && cat a.txt"), bash("call_b", "echo two > b.txt && cat b.txt")],
        interleaveCalls: true,
      },
      { kind: "text", text: "Both done." },
    );
    const run = await runClaude({ baseURL: harness.url, prompt: "write a.txt and b.txt" });
    expect(run.exitCode).toBe(0);
    expect(existsSync(join(run.workdir, "a.txt")) && existsSync(join(run.workdir, "b.txt"))).toBe(true);
    expect(run.blocks("tool_use").map((b) => b.id)).toEqual(["call_a", "call_b"]);
    expect(run.result?.result).toBe("Both done.");
    const tools = upstream.completionRequests()[1]!.body.messages.filter((m: any) => m.role === "tool");
    expect(tools.map((m: any) => m.tool_call_id)).toEqual(["call_a", "call_b"]);
    expect(tools[0].content).toContain("one");
    expect(tools[1].content).toContain("two");
  }, 90_000);

  test("thinking is shown as a thinking block; its thinking budget asked the upstream for reasoning", async () => {
    setup();
    upstream.enqueue({ kind: "text", reasoning: "The user wants a greeting.", text: "Hello!" });
    const run = await runClaude({ baseURL: harness.url, prompt: "greet me" });
    expect(run.exitCode).toBe(0);
    expect(run.blocks("thinking")[0]).toMatchObject({ thinking: "The user wants a greeting." });
    expect(run.result?.result).toBe("Hello!");
    expect(upstream.completionRequests()[0]!.body.reasoning_effort).toBeString();
  }, 90_000);

  test("a 429 surfaces as Claude Code's rate-limit error after its bounded retries", async () => {
    setup({ max_attempts: 1 });
    upstream.setDefault({ kind: "http_error", status: 429, headers: { "retry-after": "1" } });
    const run = await runClaude({ baseURL: harness.url, prompt: "hi", env: { CLAUDE_CODE_MAX_RETRIES: "2" } });
    expect(run.exitCode).toBe(1);
    expect(run.result).toMatchObject({ is_error: true });
    expect(run.result?.result).toContain("429");
    expect(run.result?.result).toContain("rate-limited");
    // One attempt per Claude Code try (agentd's own max_attempts is 1): 1 + 2 retries.
    expect(upstream.completionRequests()).toHaveLength(3);
  }, 90_000);

  test("a stream cut after it began ends with an error event, and Claude Code reports an API error", async () => {
    setup({ max_attempts: 1 });
    upstream.setDefault({
      kind: "reset_mid_stream",
      afterEvents: 3,
      reply: { kind: "text", chunks: ["one", "two", "three"], chunkDelayMs: 20 },
    });
    const run = await runClaude({ baseURL: harness.url, prompt: "hi", env: { CLAUDE_CODE_MAX_RETRIES: "2" } });
    expect(run.exitCode).toBe(1);
    expect(run.result).toMatchObject({ is_error: true });
    expect(run.result?.result).toContain("API Error");
    const requests = upstream.completionRequests();
    expect(requests.length).toBeGreaterThanOrEqual(1);
    expect(requests.length).toBeLessThanOrEqual(3);
    // The first try was a stream that began, then failed: recorded as an error, not an answer.
    expect(requests[0]!.body.stream).toBe(true);
    expect(harness.events("proxy.request").some((r) => r.outcome === "error" && r.status === 200)).toBe(true);
    expect(harness.events("proxy.request").some((r) => r.outcome === "ok")).toBe(false);
  }, 90_000);
});
