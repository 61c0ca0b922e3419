/**
 * Tracking what becomes of tool calls per model, without sockets: which blocks count as
 * unparseable (a format's own marker that did not become calls, never prose or fenced code), the
 * per-model rates, their metrics, and the repair of streamed structured calls' names.
 */
import { describe, expect, test } from "bun:test";
import { AUTO, FAMILIES } from "../../src/proxy/translate/toolCallFormats/index.ts";
import { parseToolCallText, ToolCallTextScanner } from "../../src/proxy/translate/toolCallText.ts";
import { ToolCallTextChunks } from "../../src/proxy/translate/toolCallTextChunks.ts";
import { declaredTools, ToolCallReport, type ToolCallTextPlan } from "../../src/proxy/translate/toolCallTextSetup.ts";
import { ToolCallStats, type ToolCallModelSummary } from "../../src/proxy/state/toolCallStats.ts";
import { ProxyMetrics } from "../../src/proxy/state/proxyMetrics.ts";
import { CASE_TOOLS, CASES } from "./toolCallTextCases.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

const tools = declaredTools(CASE_TOOLS);

/** Each block the scanner reported as unparseable, as [family, sample]. */
function unparsedOf(pieces: readonly string[], formats = AUTO): { families: string[]; sample: string | undefined; text: string } {
  const report = new ToolCallReport();
  const scanner = new ToolCallTextScanner(formats, tools, report);
  let text = "";
  for (const piece of pieces) text += scanner.push(piece).text;
  text += scanner.end().text;
  return { families: report.unparsed, sample: report.unparsedSample, text };
}

describe("what counts as an unparseable answer", () => {
  test("no call of any family counts, whole or split at every boundary", () => {
    for (const c of CASES.filter((c) => c.family !== "negative")) {
      expect(unparsedOf([c.text]).families).toEqual([]);
      for (let at = 1; at < c.text.length; at++) expect(unparsedOf([c.text.slice(0, at), c.text.slice(at)]).families).toEqual([]);
    }
  });

  test("of the negative controls, exactly the broken markup counts; prose, fences, JSON and a final message do not", () => {
    const counted = CASES.filter((c) => c.family === "negative").map((c) => [c.text, unparsedOf([...c.text]).families]);
    expect(counted).toEqual([
      ["I would call get_current_weather with city Dallas to check.", []],
      ['<tool_call>{"name": "get_current_weather", "arguments": </tool_call>', ["hermes"]],
      ['<tool_call>{"name": "rm_everything", "arguments": {}}</tool_call>', ["hermes"]],
      ["```bash\nls -la\n```", []],
      ['{"name": "Bob", "age": 3}', []],
      ["[1, 2, 3]", []],
      ["[see the docs(here)]", []],
      ["[TOOL_CALLS] not json at all", ["mistral"]],
      ["<|channel|>final<|message|>It is sunny.<|return|>", []],
      ["<tool_call>unterminated", ["hermes"]],
      ['```json\n{"name": "config", "value": 3}\n```', []],
      ["<function=get_weather>\n<parameter=city>Paris</function>", ["qwen3_coder"]],
      ['<minimax:tool_call>\n<invoke name="get_weather">\nnot a parameter\n</invoke>\n</minimax:tool_call>', ["minimax_m2"]],
    ]);
  });

  test("a harmony message addressed to a function that does not parse counts; its analysis channel does not", () => {
    expect(unparsedOf(["<|channel|>analysis<|message|>thinking<|end|>"]).families).toEqual([]);
    expect(unparsedOf(["<|channel|>commentary to=functions.add <|constrain|>json<|message|>{oops<|call|>"]).families).toEqual(["harmony"]);
  });

  test("markup at a format's marker that does not parse counts once, with the family and the block as sample; the text is unchanged", () => {
    const text = 'I will run it. <tool_call>{"name": "add", "arguments": {"a": 1,}</tool_call> ok';
    const whole = unparsedOf([text]);
    expect(whole).toEqual({ families: ["hermes"], sample: '<tool_call>{"name": "add", "arguments": {"a": 1,}</tool_call>', text });
    for (let at = 1; at < text.length; at++) expect(unparsedOf([text.slice(0, at), text.slice(at)])).toEqual(whole);
  });

  test("a call to an undeclared tool, an unclosed final block and a pinned family's foreign block each count", () => {
    expect(unparsedOf(['<tool_call>{"name": "drop_table", "arguments": {}}</tool_call>']).families).toEqual(["hermes"]);
    expect(unparsedOf(["<minimax:tool_call><invoke name="]).families).toEqual(["minimax_m2"]);
    expect(unparsedOf(["[TOOL_CALLS]add{not json"]).families).toEqual(["mistral"]);
    expect(unparsedOf(["<|tool_calls_section_begin|>garbage<|tool_calls_section_end|>"]).families).toEqual(["kimi_k2"]);
    const hermes = '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>';
    expect(unparsedOf([hermes], FAMILIES.glm45!).families).toEqual(["glm45"]);
  });

  test("every unparseable block counts; the sample is the first, bounded", () => {
    const long = `<tool_call>${"y".repeat(1000)}</tool_call>`;
    const out = unparsedOf([`${long} and <|python_start|>not python(<|python_end|>`]);
    expect(out.families).toEqual(["hermes", "pythonic"]);
    expect(out.sample).toBe(long.slice(0, 300));
  });

  test("a block past the size bound is released as text and counts", () => {
    const big = `<tool_call>${"x".repeat(300 * 1024)}`;
    expect(unparsedOf(big.match(/[\s\S]{1,8192}/g)!).families).toEqual(["hermes"]);
  });

  test("prose, fenced code in any language and a JSON-looking answer never count", () => {
    for (const text of [
      "Here is how: run ls, then tell me.",
      "```bash\nls -la\n```",
      '```json\n{"not": "a call"}\n```',
      '{"name": "add", "arguments": {"a": 1}} is what I would send.',
      "[1, 2, 3]",
      "Use a <b>bold</b> tag; <tool and call are words.",
    ])
      expect(unparsedOf([text])).toEqual({ families: [], sample: undefined, text });
  });

  test("the whole-answer path (a non-streamed completion) reports the same", () => {
    const report = new ToolCallReport();
    const text = "<tool_call>add\n<arg_key>a</arg_key></tool_call>";
    expect(parseToolCallText(text, AUTO, tools, report).text).toBe(text);
    expect(report.unparsed).toEqual(["hermes"]);
  });
});

describe("per-model rates", () => {
  const none = { textCalls: 0, repairs: 0, unparsed: 0, unparsedFormat: undefined };

  test("each answer counts once per finding, whatever the number of calls; rates are shares of answers", () => {
    const stats = new ToolCallStats();
    stats.record("local", "qwen3", { ...none, textCalls: 3, repairs: 2 }, 10);
    stats.record("local", "qwen3", { ...none, unparsed: 4, unparsedFormat: "hermes" }, 20);
    stats.record("local", "qwen3", none, 30);
    stats.record("local", "glm", none, 40);
    stats.record("other", "qwen3", { ...none, unparsed: 1, unparsedFormat: "mistral" }, 50);
    const row = (model: string, counts: Partial<ToolCallModelSummary> & { answers: number }): ToolCallModelSummary => ({
      model,
      text_calls: 0,
      repaired: 0,
      unparsed: 0,
      text_call_rate: 0,
      repair_rate: 0,
      unparsed_rate: 0,
      last_unparsed_format: null,
      last_unparsed_at: null,
      ...counts,
    });
    expect(stats.forProvider("local")).toEqual([
      row("qwen3", {
        answers: 3,
        text_calls: 1,
        repaired: 1,
        unparsed: 1,
        text_call_rate: 0.3333,
        repair_rate: 0.3333,
        unparsed_rate: 0.3333,
        last_unparsed_format: "hermes",
        last_unparsed_at: 20,
      }),
      row("glm", { answers: 1 }),
    ]);
    expect(stats.forProvider("other")).toEqual([
      row("qwen3", { answers: 1, unparsed: 1, unparsed_rate: 1, last_unparsed_format: "mistral", last_unparsed_at: 50 }),
    ]);
    expect(stats.forProvider("unknown")).toEqual([]);
  });

  test("the metrics count answers, findings and unparseable blocks by format, with client-given names escaped", () => {
    const metrics = new ProxyMetrics();
    metrics.toolAnswer("local", 'q"3', { textCalls: 1, repairs: 0, unparsed: 2, unparsedFormat: "hermes" }, ["hermes", "mistral"]);
    metrics.toolAnswer("local", 'q"3', { textCalls: 0, repairs: 0, unparsed: 0, unparsedFormat: undefined }, []);
    const lines = renderPrometheus(metrics.families()).split("\n");
    const labels = 'provider="local",model="q\\"3"';
    expect(lines).toContain(`agentd_proxy_tool_answers_total{${labels}} 2`);
    expect(lines).toContain(`agentd_proxy_tool_answer_findings_total{${labels},finding="text_calls"} 1`);
    expect(lines).toContain(`agentd_proxy_tool_answer_findings_total{${labels},finding="unparsed"} 1`);
    expect(lines.some((l) => l.includes('finding="repaired"'))).toBe(false);
    expect(lines).toContain(`agentd_proxy_tool_calls_unparsed_total{${labels},format="hermes"} 1`);
    expect(lines).toContain(`agentd_proxy_tool_calls_unparsed_total{${labels},format="mistral"} 1`);
    expect(metrics.toolCalls.forProvider("local")[0]).toMatchObject({ model: 'q"3', answers: 2, unparsed: 1, unparsed_rate: 0.5 });
  });
});

describe("streamed structured calls", () => {
  const declared = declaredTools([
    { type: "function", function: { name: "exec_command", parameters: {} } },
    { type: "function", function: { name: "Read", parameters: {} } },
    { type: "function", function: { name: "read", parameters: {} } },
  ]);
  const plan = (): ToolCallTextPlan => ({ formats: AUTO, tools: declared, report: new ToolCallReport() });
  const chunk = (toolCalls: unknown[], finish: string | null = null) => ({
    id: "c1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: finish }],
  });
  const names = (chunks: Record<string, unknown>[]) =>
    chunks.flatMap((c) =>
      ((c.choices as { delta?: { tool_calls?: { function?: { name?: string } }[] } }[])[0]?.delta?.tool_calls ?? []).map(
        (t) => t.function?.name,
      ),
    );

  test("a prefixed or wrongly cased name is repaired in its delta; argument deltas pass at once, unchanged", () => {
    const p = plan();
    const rewriter = new ToolCallTextChunks(p);
    const first = rewriter.push(
      chunk([{ index: 0, id: "a", type: "function", function: { name: "functions.EXEC_COMMAND", arguments: "" } }]),
    );
    expect(names(first)).toEqual(["exec_command"]);
    const args = rewriter.push(chunk([{ index: 0, function: { arguments: '{"command": "l' } }]));
    expect(args).toEqual([chunk([{ index: 0, function: { arguments: '{"command": "l' } }])]);
    rewriter.push(chunk([], "tool_calls"));
    expect(p.report.repairKinds()).toEqual(["name_prefix", "name_case"]);
  });

  test("a declared name, an ambiguous case (Read and read) and an unknown name pass as sent, with no repair noted", () => {
    const p = plan();
    const rewriter = new ToolCallTextChunks(p);
    const out = [
      ...rewriter.push(chunk([{ index: 0, id: "a", type: "function", function: { name: "exec_command", arguments: "" } }])),
      ...rewriter.push(chunk([{ index: 1, id: "b", type: "function", function: { name: "READ", arguments: "" } }])),
      ...rewriter.push(chunk([{ index: 2, id: "c", type: "function", function: { name: "functions.drop", arguments: "" } }])),
    ];
    expect(names(out)).toEqual(["exec_command", "READ", "functions.drop"]);
    expect(p.report.repairs).toEqual([]);
  });
});
