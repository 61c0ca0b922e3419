import { describe, expect, test } from "bun:test";
import { AUTO, FAMILIES } from "../../src/proxy/translate/toolCallFormats/index.ts";
import { parseToolCallText, ToolCallTextScanner, type ScanOutput } from "../../src/proxy/translate/toolCallText.ts";
import { providerConfigSchema } from "../../src/core/config/sections/providerConfig.ts";
import { ToolCallTextChunks } from "../../src/proxy/translate/toolCallTextChunks.ts";
import { declaredTools, ToolCallReport, toolCallTextPlan } from "../../src/proxy/translate/toolCallTextSetup.ts";
import { CASE_TOOLS, CASES } from "./toolCallTextCases.ts";

const tools = declaredTools(CASE_TOOLS);

function shape(out: ScanOutput) {
  return { text: out.text, calls: out.calls.map((call) => ({ name: call.name, arguments: JSON.parse(call.arguments) })) };
}

/** Feeds `pieces` to a fresh scanner, as a stream would. */
function streamed(pieces: readonly string[], formats = AUTO): ScanOutput {
  const scanner = new ToolCallTextScanner(formats, tools);
  const out: ScanOutput = { text: "", calls: [] };
  for (const piece of [...pieces.map((p) => scanner.push(p)), scanner.end()]) {
    out.text += piece.text;
    out.calls.push(...piece.calls);
  }
  return out;
}

describe("every family's format, detected by marker (auto)", () => {
  for (const c of CASES) {
    test(`${c.family}: ${c.label}, whole`, () => {
      expect(shape(parseToolCallText(c.text, AUTO, tools))).toEqual({ text: c.rest, calls: c.calls });
    });
    test(`${c.family}: ${c.label}, streamed split at every boundary and one character at a time`, () => {
      const expected = { text: c.rest, calls: c.calls };
      for (let at = 1; at < c.text.length; at++) expect(shape(streamed([c.text.slice(0, at), c.text.slice(at)]))).toEqual(expected);
      expect(shape(streamed([...c.text]))).toEqual(expected);
    });
  }
});

const CLOSERS = [
  "</tool_call>",
  "<｜tool▁calls▁end｜>",
  "<|tool_calls_section_end|>",
  "</minimax:tool_call>",
  "<|python_end|>",
  "<|call|>",
  "</tool_calls>",
  "```",
];

describe("a final block left open (the model stopped there) still counts", () => {
  for (const c of CASES.filter((c) => c.calls.length > 0)) {
    const closer = CLOSERS.find((closer) => c.text.endsWith(closer));
    if (!closer) continue;
    test(`${c.family}: ${c.label}, without its last ${closer}`, () => {
      const open = c.text.slice(0, -closer.length);
      expect(shape(parseToolCallText(open, AUTO, tools))).toEqual({ text: c.rest, calls: c.calls });
      expect(shape(streamed([...open]))).toEqual({ text: c.rest, calls: c.calls });
    });
  }
});

describe("rules that hold across formats", () => {
  test("a call naming an undeclared tool leaves its whole block as text", () => {
    const text = 'Go <tool_call>[{"name": "add", "arguments": {}}, {"name": "drop_table", "arguments": {}}]</tool_call>';
    expect(shape(parseToolCallText(text, AUTO, tools))).toEqual({ text, calls: [] });
  });

  test("no declared tools: nothing is ever a call", () => {
    const text = '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>';
    expect(shape(parseToolCallText(text, AUTO, new Map()))).toEqual({ text, calls: [] });
  });

  test("a pinned family reads only its own format", () => {
    const glm = "<tool_call>add\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>";
    const hermes = '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>';
    expect(shape(parseToolCallText(glm, FAMILIES.glm45!, tools)).calls).toEqual([{ name: "add", arguments: { a: 1 } }]);
    expect(shape(parseToolCallText(hermes, FAMILIES.glm45!, tools))).toEqual({ text: hermes, calls: [] });
    const pythonic = "[add(a=1, b=2)]";
    expect(shape(parseToolCallText(pythonic, FAMILIES.hermes!, tools))).toEqual({ text: pythonic, calls: [] });
  });

  test("the family each call was written in is told", () => {
    const text = '<|tool_call|>[{"name": "add", "arguments": {}}] then [TOOL_CALLS]add{"a": 1}';
    expect(parseToolCallText(text, AUTO, tools).calls.map((call) => call.family)).toEqual(["granite", "mistral"]);
  });

  test("a marker split across deltas is held back, and released as text when it turns out not to be one", () => {
    const scanner = new ToolCallTextScanner(AUTO, tools);
    expect(scanner.push("Run <to").text).toBe("Run ");
    expect(scanner.push("ol_call>{").text).toBe("");
    expect(scanner.push('"name":"add","arguments":{}}</tool').calls).toEqual([]);
    const closed = scanner.push("_call> done <");
    expect([closed.text, closed.calls.map((c) => c.name)]).toEqual([" done ", ["add"]]);
    expect(scanner.push("b>").text).toBe("<b>");
  });

  test("fenced code in another language streams on as text before its fence closes", () => {
    const scanner = new ToolCallTextScanner(AUTO, tools);
    expect(scanner.push("Run:\n```ba").text).toBe("Run:\n");
    expect(scanner.push("sh\nls -la\n").text).toBe("```bash\nls -la\n");
    expect(scanner.push("``").text).toBe("");
    expect(scanner.push("`\nThen ```json\n").text).toBe("```\nThen ");
    const call = scanner.push('{"name": "add", "arguments": {"a": 1}}\n```');
    expect([call.text, call.calls.map((c) => c.name)]).toEqual(["", ["add"]]);
  });

  test("a block that never closes is released as text past its bound, unchanged", () => {
    const big = `<tool_call>${"x".repeat(300 * 1024)}`;
    const scanner = new ToolCallTextScanner(AUTO, tools);
    const out = scanner.push(big);
    expect(out.text + scanner.end().text).toBe(big);
  });

  test("hostile text stays text, whole: deep nesting, a long JSON answer, long whitespace inside a DeepSeek block", () => {
    const deep = `[${"[".repeat(100_000)}`;
    const longJson = `{"data": "${"x".repeat(300 * 1024)}"}`;
    const spaces = `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n\`\`\`${" ".repeat(200_000)}x<｜tool▁call▁end｜><｜tool▁calls▁end｜>`;
    for (const text of [deep, longJson, spaces]) {
      expect(shape(parseToolCallText(text, AUTO, tools))).toEqual({ text, calls: [] });
      const pieces = text.match(/[\s\S]{1,4096}/g)!;
      expect(shape(streamed(pieces))).toEqual({ text, calls: [] });
    }
  });

  test("an answer that starts like JSON but is prose-wrapped is text once it ends", () => {
    const text = '{"name": "add", "arguments": {"a": 1}} is what I would send.';
    expect(shape(streamed([text.slice(0, 10), text.slice(10)]))).toEqual({ text, calls: [] });
  });
});

describe("the plan for one request", () => {
  const provider = (extra: Record<string, unknown> = {}) =>
    providerConfigSchema().parse({ name: "p", base_url: "http://127.0.0.1:1/v1", ...extra });
  const declared = [{ type: "function", function: { name: "add", parameters: { type: "object" } } }];

  test("declared tools are read from Chat, Responses and Anthropic shapes", () => {
    expect([...declaredTools(declared)]).toEqual([["add", { type: "object" }]]);
    expect([...declaredTools([{ type: "function", name: "add", parameters: { type: "object" } }])]).toEqual([["add", { type: "object" }]]);
    expect([...declaredTools([{ name: "add", input_schema: { type: "object" } }, { name: "bare" }, "junk", null])]).toEqual([
      ["add", { type: "object" }],
      ["bare", {}],
    ]);
  });

  test("on by default; nothing to do when turned off or when no tool is declared", () => {
    expect(toolCallTextPlan(provider(), "m", declared)?.formats).toBe(AUTO);
    expect(toolCallTextPlan(provider({ tool_call_text: "off" }), "m", declared)).toBeUndefined();
    expect(toolCallTextPlan(provider(), "m", undefined)).toBeUndefined();
    expect(toolCallTextPlan(provider(), "m", [])).toBeUndefined();
  });

  test("tool_call_format: one family, or by exact name before globs, else auto", () => {
    expect(toolCallTextPlan(provider({ tool_call_format: "glm45" }), "m", declared)?.formats).toBe(FAMILIES.glm45!);
    const byModel = provider({ tool_call_format: { "qwen*": "hermes", "qwen3-coder": "qwen3_coder" } });
    expect(toolCallTextPlan(byModel, "qwen3-coder", declared)?.formats).toBe(FAMILIES.qwen3_coder!);
    expect(toolCallTextPlan(byModel, "qwen2.5", declared)?.formats).toBe(FAMILIES.hermes!);
    expect(toolCallTextPlan(byModel, "llama", declared)?.formats).toBe(AUTO);
    expect(() => provider({ tool_call_format: "gpt5" })).toThrow();
  });
});

describe("chat chunks", () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "c",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  test("a chunk whose text is held back keeps its role and reasoning; the finish becomes tool_calls", () => {
    const report = new ToolCallReport();
    const chunks = new ToolCallTextChunks({ formats: AUTO, tools, report });
    const out = [
      ...chunks.push(chunk({ role: "assistant", reasoning_content: "think", content: "<tool_" })),
      ...chunks.push(chunk({ content: 'call>{"name": "functions.add", "arguments": {"a": 1}}</tool_call>' })),
      ...chunks.push(chunk({}, "stop")),
    ].map((c) => (c.choices as { delta: Record<string, unknown>; finish_reason: string | null }[])[0]!);
    expect(out[0]!.delta).toEqual({ role: "assistant", reasoning_content: "think", content: "" });
    const call = (out[1]!.delta.tool_calls as { index: number; function: unknown }[])[0]!;
    expect([call.index, call.function]).toEqual([0, { name: "add", arguments: '{"a":1}' }]);
    expect(out.at(-1)!.finish_reason).toBe("tool_calls");
    expect([report.families, report.repairKinds()]).toEqual([["hermes"], ["name_prefix"]]);
  });

  test("text calls are numbered after the upstream's own structured calls", () => {
    const chunks = new ToolCallTextChunks({ formats: AUTO, tools, report: new ToolCallReport() });
    chunks.push(chunk({ tool_calls: [{ index: 0, id: "x", type: "function", function: { name: "add", arguments: "{}" } }] }));
    const out = chunks.push(chunk({ content: '[TOOL_CALLS]multiply{"a": 2}' }, "tool_calls"));
    const indexes = out.flatMap((c) =>
      ((c.choices as { delta: { tool_calls?: { index: number }[] } }[])[0]!.delta.tool_calls ?? []).map((t) => t.index),
    );
    expect(indexes).toEqual([1]);
  });
});
