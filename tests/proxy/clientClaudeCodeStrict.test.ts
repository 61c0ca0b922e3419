/**
 * The real Claude Code CLI through agentd to upstreams as strict as OpenAI's (a `user` over 64
 * characters is a 400, reasoning only as a summary asked for): a Bash round trip with thinking on
 * a chat and on a Responses upstream, parallel tool use with thinking on all three wires, and a rate limit and an open breaker that each end in
 * Claude Code's own error instead of a frozen or overloaded session.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { removeTempDirs } from "../support/tempDir.ts";
import { runClaude } from "./claudeCodeRun.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

const harnesses: Array<{ up: ScriptedUpstream; h: ProxyHarness }> = [];

afterAll(async () => {
  for (const { up, h } of harnesses) {
    await h.close();
    await up.close();
  }
  removeTempDirs();
});

/**
 * An upstream and a proxy of the case's own: the cases run side by side, each under a provider
 * name of its own, so each harness keeps only its own log lines.
 */
function start(
  name: string,
  wire: "chat" | "responses" | "anthropic",
  options: { strict?: boolean } = {},
): { up: ScriptedUpstream; h: ProxyHarness } {
  const up = startScriptedUpstream({ wires: [wire], strict: options.strict ?? true });
  const h = startProxy({ providers: [{ name, base_url: up.url, wire, aliases: { "claude-*": "gpt-test" } }] });
  harnesses.push({ up, h });
  return { up, h };
}

const bash = { id: "call_bash", name: "Bash", arguments: JSON.stringify({ command: "echo strict-ok > proof.txt && cat proof.txt" }) };

describe.concurrent("Claude Code against strict upstreams", () => {
  for (const wire of ["chat", "responses"] as const) {
    test(`${wire}: a Bash round trip with thinking; identifiers fit, nothing refused`, async () => {
      const { up, h } = start(`${wire}-round-trip`, wire);
      up.enqueue(
        { kind: "text", text: "Running it.", reasoning: "A file must be written.", toolCalls: [bash] },
        { kind: "text", text: "Done: strict-ok." },
      );
      const run = await runClaude({
        baseURL: h.url,
        prompt: "write proof.txt",
        env: { MAX_THINKING_TOKENS: "8000", CLAUDE_CODE_MAX_RETRIES: "0" },
      });
      expect(run.result).toMatchObject({ subtype: "success", is_error: false, result: "Done: strict-ok." });
      expect(readFileSync(join(run.workdir, "proof.txt"), "utf8")).toBe("strict-ok\n");
      expect(run.blocks("thinking")[0]).toMatchObject({ thinking: "A file must be written." });
      const sent = up.completionRequests();
      expect(sent).toHaveLength(2);
      for (const request of sent) {
        expect(typeof request.body.user).toBe("string");
        expect(request.body.user.length).toBeLessThanOrEqual(64);
      }
      // Claude Code's ~150-character user_id became a digest; its session id the cache key of both turns.
      expect(sent[0]!.body.prompt_cache_key).toMatch(/^[0-9a-f-]{36}$/);
      expect(sent[1]!.body.prompt_cache_key).toBe(sent[0]!.body.prompt_cache_key);
      expect(sent[1]!.body.user).toBe(sent[0]!.body.user);
      if (wire === "responses") expect(sent[0]!.body.reasoning).toMatchObject({ summary: "auto" });
      expect(h.events("upstream.error")).toHaveLength(0);
    }, 90_000);
  }

  for (const wire of ["chat", "responses", "anthropic"] as const) {
    test(`${wire}: parallel tool use with thinking: both Bash calls run, both results go back in one request`, async () => {
      const { up, h } = start(`${wire}-parallel`, wire, { strict: wire !== "anthropic" });
      const call = (id: string, command: string) => ({ id, name: "Bash", arguments: JSON.stringify({ command }) });
      up.enqueue(
        {
          kind: "text",
          reasoning: "Two files, at once.",
          toolCalls: [call("call_a", "echo one > a.txt && cat a.txt"), call("call_b", "echo two > b.txt && cat b.txt")],
        },
        { kind: "text", text: "Both done." },
      );
      const run = await runClaude({
        baseURL: h.url,
        prompt: "write a.txt and b.txt",
        env: { MAX_THINKING_TOKENS: "8000", CLAUDE_CODE_MAX_RETRIES: "0" },
      });
      expect(run.result).toMatchObject({ subtype: "success", is_error: false, result: "Both done." });
      expect(readFileSync(join(run.workdir, "a.txt"), "utf8")).toBe("one\n");
      expect(readFileSync(join(run.workdir, "b.txt"), "utf8")).toBe("two\n");
      expect(run.blocks("tool_use").map((b) => b.id)).toEqual(["call_a", "call_b"]);
      expect(run.blocks("thinking")[0]).toMatchObject({ thinking: "Two files, at once." });
      const sent = up.completionRequests();
      expect(sent).toHaveLength(2);
      // Both results in the one follow-up request, whatever the upstream's wire calls them.
      const followUp = JSON.stringify(sent[1]!.body);
      for (const text of ["call_a", "call_b", "one", "two"]) expect(followUp).toContain(text);
      expect(h.events("upstream.error")).toHaveLength(0);
    }, 90_000);
  }

  test("a 429 with Retry-After: 1, agentd's defaults: Claude Code's rate-limit error on every try, no breaker", async () => {
    const { up, h } = start("chat-429", "chat");
    up.setDefault({ kind: "http_error", status: 429, headers: { "retry-after": "1" } });
    const started = performance.now();
    const run = await runClaude({ baseURL: h.url, prompt: "hi", env: { CLAUDE_CODE_MAX_RETRIES: "2" } });
    console.log(`Claude Code × chat × 429 retry-after 1 → ${run.result?.result} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    expect(run.exitCode).toBe(1);
    expect(run.result?.result).toContain("429");
    expect(run.result?.result).toContain("rate-limited");
    expect(h.events("breaker.open")).toHaveLength(0);
  }, 90_000);

  test("a breaker held open 300 s: Claude Code gets an overloaded error, not a frozen session", async () => {
    const { up, h } = start("responses-breaker", "responses");
    await fetch(`${h.url}/api/admin/proxy/providers/responses-breaker/breaker/open`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cooldown_ms: 300_000 }),
    });
    const started = performance.now();
    const run = await runClaude({ baseURL: h.url, prompt: "hi", env: { CLAUDE_CODE_MAX_RETRIES: "2" } });
    console.log(
      `Claude Code × responses × breaker open 300 s → ${run.result?.result} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
    expect(run.exitCode).toBe(1);
    expect(run.result?.result).toMatch(/529|overloaded/i);
    expect(up.completionRequests()).toHaveLength(0);
  }, 90_000);
});
