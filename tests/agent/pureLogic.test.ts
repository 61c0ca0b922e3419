import { describe, expect, test } from "bun:test";
import { decideCallPolicy } from "../../src/agent/approvalPolicy.ts";
import { approvalsConfigSchema } from "../../src/core/config/sections/approvalsConfig.ts";
import { ChatChunkAccumulator } from "../../src/agent/chatChunkAccumulator.ts";
import { invokesSudo, matchesCommandGlob } from "../../src/agent/commandGlob.ts";
import { redactHeaders, redactSecrets, redactText } from "../../src/core/redaction/index.ts";
import { parseSidecar, readableSidecar, renderSidecarRecord, SIDECAR_SEPARATOR } from "../../src/agent/sidecarRecord.ts";
import { parseApprovalAnswer, transcriptLine } from "../../src/agent/terminalTranscript.ts";
import { clipToolResult } from "../../src/agent/toolResultText.ts";
import { callSummary } from "../../src/agent/callSubject.ts";
import { argumentsByCallId, argumentValue } from "../../src/agent/toolArguments.ts";

const defaults = approvalsConfigSchema().parse({});

describe("command globs", () => {
  test("match whole command lines with * and ?", () => {
    expect(matchesCommandGlob("sudo *", "sudo systemctl restart nginx")).toBe(true);
    expect(matchesCommandGlob("sudo *", "echo sudo")).toBe(false);
    expect(matchesCommandGlob("rm -rf /*", "rm  -rf   /var")).toBe(true);
    expect(matchesCommandGlob("ls ?", "ls a")).toBe(true);
    expect(matchesCommandGlob("ls ?", "ls ab")).toBe(false);
    expect(matchesCommandGlob("a.b", "axb")).toBe(false);
  });
  test("find sudo anywhere a command starts", () => {
    for (const cmd of ["sudo id", "cd / && sudo id", "true; sudo -u x id", "echo $(sudo id)", "env A=1 sudo id"])
      expect(invokesSudo(cmd)).toBe(true);
    // Ways around a parser that only looks at command positions: all of them still ask.
    for (const cmd of [
      "su''do id",
      "s\\udo id",
      "sudo>/tmp/o id",
      "sudo</dev/null id",
      "{sudo,id}",
      "sudo\\\n id",
      "true\nsudo reboot",
      "FOO=1 sudo reboot",
      "/usr/bin/sudo reboot",
      "bash -c 'sudo reboot'",
      "{ sudo reboot; }",
      "nohup sudo x",
      "time sudo x",
      "xargs sudo x",
      'bash -c "sudo"',
    ]) {
      expect(invokesSudo(cmd)).toBe(true);
    }
    for (const cmd of ["sudoku", "pseudo x", "echo sudoers.d", "ls /etc/sudo.conf"]) expect(invokesSudo(cmd)).toBe(false);
  });
});

describe("approval policy", () => {
  const grants = new Set<string>();
  test("defaults: exec and fs_write allowed, sudo, hop and service_control asked", () => {
    expect(decideCallPolicy({ scope: "exec", command: "ls", ...defaults, grants }).verdict).toBe("allow");
    expect(decideCallPolicy({ scope: "fs_write", ...defaults, grants }).verdict).toBe("allow");
    expect(decideCallPolicy({ scope: "exec", command: "sudo ls", ...defaults, grants })).toEqual({
      verdict: "ask",
      scope: "sudo",
      reason: "policy:sudo",
    });
    expect(decideCallPolicy({ scope: "hop", ...defaults, grants }).verdict).toBe("ask");
    expect(decideCallPolicy({ scope: "service_control", ...defaults, grants }).verdict).toBe("ask");
    expect(decideCallPolicy({ scope: "read", ...defaults, grants }).verdict).toBe("allow");
  });
  test("an allow rule never allows a call that could raise privileges: the sudo policy decides", () => {
    const policy = approvalsConfigSchema().parse({}).policy;
    const rules = [
      { match: "git status *", action: "allow" as const },
      { match: "uptime", action: "allow" as const },
      { match: "sudo rm *", action: "deny" as const },
    ];
    const grants = new Set<string>();
    expect(decideCallPolicy({ scope: "exec", command: "git status x", policy, rules, grants })).toMatchObject({
      verdict: "allow",
      scope: "exec",
    });
    expect(decideCallPolicy({ scope: "exec", command: "git status x; sudo -n id", policy, rules, grants })).toEqual({
      verdict: "ask",
      scope: "sudo",
      reason: "policy:sudo",
    });
    // The text check found a reason the text alone does not show (an odd shell, BASH_ENV).
    expect(
      decideCallPolicy({ scope: "exec", command: "uptime", policy, rules, grants, escalation: ["runs under /tmp/evilsh"] }),
    ).toMatchObject({
      verdict: "ask",
      scope: "sudo",
    });
    expect(
      decideCallPolicy({ scope: "exec", command: "uptime", policy: { ...policy, sudo: "deny" }, rules, grants, escalation: ["x"] }).verdict,
    ).toBe("deny");
    // Rules that ask or refuse still apply.
    expect(decideCallPolicy({ scope: "exec", command: "sudo rm -rf /", policy: { ...policy, sudo: "allow" }, rules, grants }).verdict).toBe(
      "deny",
    );
  });
  test("the first matching rule wins; a grant answers an ask but never a deny", () => {
    const rules = [
      { match: "rm -rf /*", action: "deny" as const },
      { match: "rm *", action: "ask" as const },
    ];
    const policy = defaults.policy;
    expect(decideCallPolicy({ scope: "exec", command: "rm -rf /etc", policy, rules, grants: new Set(["exec"]) }).verdict).toBe("deny");
    expect(decideCallPolicy({ scope: "exec", command: "rm x", policy, rules, grants })).toEqual({
      verdict: "ask",
      scope: "exec",
      reason: "rule:rm *",
    });
    expect(decideCallPolicy({ scope: "exec", command: "rm x", policy, rules, grants: new Set(["exec"]) }).verdict).toBe("allow");
    expect(decideCallPolicy({ scope: "exec", command: "sudo ls", policy, rules, grants: new Set(["sudo"]) })).toEqual({
      verdict: "allow",
      scope: "sudo",
      reason: "grant:sudo",
    });
    expect(
      decideCallPolicy({ scope: "exec", command: "ls", policy: { ...policy, exec: "deny" }, rules, grants: new Set(["exec"]) }).verdict,
    ).toBe("deny");
  });
});

describe("redaction", () => {
  test("hides keys by name and by shape, keeps the rest", () => {
    const value = {
      api_key: "abc",
      headers: { Authorization: "Bearer sk-abcdefghijklmnopqrstu" },
      max_tokens: 100,
      note: "key sk-proj-ABCDEFGHIJKLMNOP1234 here",
      token: "t0k3n",
      usage: { prompt_tokens: 3 },
    };
    expect(redactSecrets(value)).toEqual({
      api_key: "[redacted]",
      headers: { Authorization: "[redacted]" },
      max_tokens: 100,
      note: "key [redacted] here",
      token: "[redacted]",
      usage: { prompt_tokens: 3 },
    });
    expect(redactText("curl -H 'Authorization: Bearer abcdefghijklmnop' x")).toBe("curl -H 'Authorization: Bearer [redacted]' x");
    expect(redactText("OPENAI_API_KEY=zzz ./run")).toBe("OPENAI_API_KEY=[redacted] ./run");
    expect(redactSecrets({ text: "my custom secret-value-123456" }, ["secret-value-123456"])).toEqual({ text: "my custom [redacted]" });
    expect(redactHeaders(new Headers({ "x-api-key": "k", accept: "json" }))).toEqual({ "x-api-key": "[redacted]", accept: "json" });
  });
});

describe("sidecar records", () => {
  test("render as a JSON line, comment lines and a separator, and parse back", () => {
    const record = { ts: "2026-01-01T00:00:00.000Z", session: "ses_1", kind: "tool.end", result: "line1\nline2" };
    const text = renderSidecarRecord(record) + renderSidecarRecord({ ...record, kind: "turn.end" });
    expect(parseSidecar(text)).toEqual([record, { ...record, kind: "turn.end" }]);
    expect(text.split("\n")[1]).toBe("# {");
    expect(readableSidecar(text)).toContain('"kind": "tool.end"');
  });

  test("every line of the readable rendering is a comment, one per line of the indented JSON", () => {
    const record = {
      ts: "2026-01-01T00:00:00.000Z",
      session: "ses_1",
      kind: "tool.start",
      arguments: { cmd: "ls", nested: [1, { a: "b" }] },
    };
    const pretty = JSON.stringify(record, null, 2).split("\n");
    const lines = renderSidecarRecord(record).split("\n");
    expect(lines).toEqual([JSON.stringify(record), ...pretty.map((line) => `# ${line}`), SIDECAR_SEPARATOR, ""]);
  });
});

describe("tool call arguments", () => {
  test("the newest model message that made calls gives each call's argument text", () => {
    const call = (id: string, args: string) => ({ id, type: "function", function: { name: "t", arguments: args } });
    const history = [
      { role: "assistant", content: null, tool_calls: [call("old", "{}")] },
      { role: "tool", tool_call_id: "old", content: "ok" },
      { role: "assistant", content: null, tool_calls: [call("a", '{"n":1}'), call("b", "")] },
      { role: "tool", tool_call_id: "a", content: "ok" },
    ];
    expect(argumentsByCallId(history)).toEqual(
      new Map([
        ["a", '{"n":1}'],
        ["b", ""],
      ]),
    );
    expect(argumentsByCallId([{ role: "user", content: "hi" }])).toEqual(new Map());
  });

  test("are stored parsed when they are JSON and as text when not", () => {
    expect(argumentValue('{"n":1}')).toEqual({ n: 1 });
    expect(argumentValue("{not json")).toBe("{not json");
  });
});

describe("stream chunks", () => {
  test("join text and tool-call deltas by index", () => {
    const acc = new ChatChunkAccumulator();
    expect(acc.add({ choices: [{ delta: { content: "he" } }] })).toBe("he");
    acc.add({ choices: [{ delta: { content: "y", tool_calls: [{ index: 1, id: "b", function: { name: "two", arguments: '{"x"' } }] } }] });
    acc.add({ choices: [{ delta: { tool_calls: [{ index: 0, id: "a", function: { name: "one", arguments: "{}" } }] } }] });
    acc.add({ choices: [{ delta: { tool_calls: [{ index: 1, function: { arguments: ":1}" } }] }, finish_reason: "tool_calls" }] });
    acc.add({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } });
    expect(acc.result()).toEqual({
      content: "hey",
      toolCalls: [
        { id: "a", name: "one", arguments: "{}" },
        { id: "b", name: "two", arguments: '{"x":1}' },
      ],
      finishReason: "tool_calls",
      usage: { prompt_tokens: 1, completion_tokens: 2 },
      chunks: 5,
    });
  });
  test("over-long tool results keep head and tail", () => {
    const { text, clipped } = clipToolResult("a".repeat(5000) + "b".repeat(5000), 2000);
    expect(clipped).toBe(true);
    expect(text.startsWith("a".repeat(1000))).toBe(true);
    expect(text.endsWith("b".repeat(1000))).toBe(true);
    expect(text).toContain("characters cut by agentd");
    expect(clipToolResult("short", 2000)).toEqual({ text: "short", clipped: false });
  });
});

describe("terminal transcript", () => {
  test("reads answers and renders events", () => {
    expect(parseApprovalAnswer(" O ")).toBe("allow_once");
    expect(parseApprovalAnswer("session")).toBe("allow_session");
    expect(parseApprovalAnswer("d")).toBe("deny");
    expect(parseApprovalAnswer("yes please")).toBeUndefined();
    expect(transcriptLine({ seq: 1, type: "text.delta", data: { delta: "hi" } })).toEqual({ text: "hi" });
    expect(
      transcriptLine({
        seq: 2,
        type: "tool.end",
        data: { tool: "echo", outcome: "timeout", duration_ms: 10.4, error: { code: "timeout", message: "too slow" } },
      }).note,
    ).toBe("← echo timeout in 10 ms: too slow");
  });
});

describe("the approval question", () => {
  test("shows the command with key-like values redacted (it lands in logs, events and the page)", () => {
    const tool = { name: "exec_command" } as Parameters<typeof callSummary>[0];
    const summary = callSummary(
      tool,
      {},
      "OPENAI_API_KEY=sk-proj-abcdefghijklmnop sudo curl -H 'Authorization: Bearer abcdefghijklmnop1234' https://x",
    );
    expect(summary).not.toContain("sk-proj-abcdefghijklmnop");
    expect(summary).not.toContain("abcdefghijklmnop1234");
    expect(summary).toStartWith('exec_command "OPENAI_API_KEY=[redacted] sudo curl');
  });
});
