import { describe, expect, test } from "bun:test";
import { ChatStreamToResponses, type ResponsesEvent } from "../../src/proxy/translate/chatStreamToResponsesEvents.ts";
import { chatToResponsesRequest } from "../../src/proxy/translate/chatToResponsesRequest.ts";
import { newShell } from "../../src/proxy/translate/responseObject.ts";
import { responseToChatCompletion } from "../../src/proxy/translate/responseToChatCompletion.ts";
import { ResponsesStreamToChat } from "../../src/proxy/translate/responsesStreamToChatChunks.ts";
import { cutAtStop, StopCutter } from "../../src/proxy/translate/stopSequences.ts";

const chunk = (delta: object, finish: string | null = null, logprobs: object | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, logprobs, finish_reason: finish }],
});

const at = (events: ResponsesEvent[]) =>
  events.map((e) => `${e.type.replace("response.", "")}${e.output_index === undefined ? "" : `@${e.output_index}`}`);

describe("Chat stream → Responses events", () => {
  test("interleaved parallel calls: each item is closed before the next opens, arguments whole", () => {
    const translator = new ChatStreamToResponses(newShell({ model: "m" }));
    const events = [
      ...translator.start(),
      ...translator.push(chunk({ tool_calls: [{ index: 0, id: "a", function: { name: "f", arguments: "" } }] })),
      ...translator.push(chunk({ tool_calls: [{ index: 1, id: "b", function: { name: "g", arguments: "" } }] })),
      ...translator.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] })),
      ...translator.push(chunk({ tool_calls: [{ index: 1, function: { arguments: '{"y":' } }] })),
      ...translator.push(chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] })),
      ...translator.push(chunk({ tool_calls: [{ index: 1, function: { arguments: "2}" } }] })),
      ...translator.push(chunk({}, "tool_calls")),
    ];
    const end = translator.finish();
    const all = [...events, ...end.events];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(at(all)).toEqual([
      "created",
      "in_progress",
      "output_item.added@0",
      "function_call_arguments.delta@0",
      "function_call_arguments.delta@0",
      "function_call_arguments.done@0",
      "output_item.done@0",
      "output_item.added@1",
      "function_call_arguments.delta@1",
      "function_call_arguments.delta@1",
      "function_call_arguments.done@1",
      "output_item.done@1",
      "completed",
    ]);
    // What call 1 sent while call 0 was open comes out at once when it opens.
    const deltas = all.filter((e) => e.type === "response.function_call_arguments.delta" && e.output_index === 1).map((e) => e.delta);
    expect(deltas).toEqual(['{"y":', "2}"]);
    expect(end.response.output).toEqual([
      expect.objectContaining({ call_id: "a", arguments: '{"x":1}', status: "completed" }),
      expect.objectContaining({ call_id: "b", arguments: '{"y":2}', status: "completed" }),
    ]);
  });

  test("reasoning is summary parts when a summary was asked; custom and namespaced calls keep their declared form", () => {
    const shell = newShell({
      model: "m",
      reasoning: { effort: "low", summary: "auto" },
      tools: [
        { type: "custom", name: "apply_patch" },
        { type: "namespace", name: "ns", tools: [{ type: "function", name: "go" }] },
      ],
    });
    const translator = new ChatStreamToResponses(shell);
    const events = [
      ...translator.start(),
      ...translator.push(chunk({ reasoning_content: "Think" })),
      ...translator.push(chunk({ reasoning_content: "ing." })),
      ...translator.push(chunk({ tool_calls: [{ index: 0, id: "a", function: { name: "apply_patch", arguments: '{"input":"P"}' } }] })),
      ...translator.push(chunk({ tool_calls: [{ index: 1, id: "b", function: { name: "ns__go", arguments: "{}" } }] })),
      ...translator.push(chunk({}, "tool_calls")),
    ];
    const end = translator.finish();
    const all = [...events, ...end.events];
    expect(at(all)).toEqual([
      "created",
      "in_progress",
      "output_item.added@0",
      "reasoning_summary_part.added@0",
      "reasoning_summary_text.delta@0",
      "reasoning_summary_text.delta@0",
      "reasoning_summary_text.done@0",
      "reasoning_summary_part.done@0",
      "output_item.done@0",
      "output_item.added@1",
      "custom_tool_call_input.delta@1",
      "custom_tool_call_input.done@1",
      "output_item.done@1",
      "output_item.added@2",
      "function_call_arguments.delta@2",
      "function_call_arguments.done@2",
      "output_item.done@2",
      "completed",
    ]);
    expect(end.response.output).toEqual([
      expect.objectContaining({ type: "reasoning", summary: [{ type: "summary_text", text: "Thinking." }], content: [] }),
      expect.objectContaining({ type: "custom_tool_call", call_id: "a", name: "apply_patch", input: "P" }),
      expect.objectContaining({ type: "function_call", call_id: "b", name: "go", namespace: "ns", arguments: "{}" }),
    ]);
  });

  test("chat logprobs ride on output_text deltas and the finished part", () => {
    const translator = new ChatStreamToResponses(newShell({ model: "m" }));
    const lp = { token: "Hi", logprob: -0.1, bytes: [72, 105], top_logprobs: [] };
    const events = [...translator.push(chunk({ content: "Hi" }, null, { content: [lp] })), ...translator.finish().events];
    expect(events.find((e) => e.type === "response.output_text.delta")!.logprobs).toEqual([lp]);
    const done = events.find((e) => e.type === "response.completed")!.response as { output: { content: { logprobs: unknown[] }[] }[] };
    expect(done.output[0]!.content[0]!.logprobs).toEqual([lp]);
  });
});

describe("Chat request → Responses request and back: stop, logprobs, drops", () => {
  test("seed, penalties and logit_bias are dropped and named; stop is kept by the proxy; logprobs map to the include", () => {
    const dropped: string[] = [];
    const request = chatToResponsesRequest(
      {
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        seed: 7,
        frequency_penalty: 0.5,
        presence_penalty: 0.2,
        logit_bias: { "50256": -100 },
        stop: ["END"],
        logprobs: true,
        top_logprobs: 3,
      },
      dropped,
    );
    expect(dropped).toEqual(["seed", "frequency_penalty", "presence_penalty", "logit_bias"]);
    expect(request).toEqual({
      model: "m",
      input: [{ role: "user", content: "hi" }],
      include: ["message.output_text.logprobs"],
      top_logprobs: 3,
      store: false,
    });
  });

  test("stop sequences: cut at the first, held back across deltas, released when none completes", () => {
    expect(cutAtStop("one END two STOP", ["STOP", "END"])).toEqual({ text: "one ", cut: true });
    expect(cutAtStop("nothing", ["END"])).toEqual({ text: "nothing", cut: false });
    const cutter = new StopCutter(["END"]);
    expect(cutter.push("abc E")).toEqual({ text: "abc ", stopped: false });
    expect(cutter.push("N")).toEqual({ text: "", stopped: false });
    expect(cutter.push("Dx")).toEqual({ text: "", stopped: true });
    const open = new StopCutter(["END"]);
    expect(open.push("the EN")).toEqual({ text: "the ", stopped: false });
    expect(open.flush()).toBe("EN");
  });

  test("a non-streamed answer is cut at the stop sequence, finish stop, later tool calls gone; logprobs mapped", () => {
    const lp = [{ token: "a", logprob: -1, bytes: [97], top_logprobs: [] }];
    const completion = responseToChatCompletion(
      {
        id: "resp_1",
        status: "completed",
        output: [
          { type: "message", content: [{ type: "output_text", text: "keep this\n\nObservation: no", logprobs: lp }] },
          { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
        ],
      },
      "m",
      ["Observation:"],
    );
    const choice = (completion.choices as any[])[0];
    expect(choice.message.content).toBe("keep this\n\n");
    expect(choice.message.tool_calls).toBeUndefined();
    expect(choice.finish_reason).toBe("stop");
    expect(choice.logprobs).toEqual({ content: lp, refusal: null });
  });

  test("a stream ends at the stop sequence split across deltas, with finish stop, and is marked cut", () => {
    const translator = new ResponsesStreamToChat("m", false, ["END"]);
    const texts: string[] = [];
    let last: { chunks: unknown[]; end: boolean; cut?: boolean } = { chunks: [], end: false };
    for (const delta of ["Hello E", "N", "D and more"]) {
      last = translator.push({ type: "response.output_text.delta", output_index: 0, delta, response: { id: "r" } });
      for (const c of last.chunks as any[]) {
        if (c.choices[0]?.delta.content) texts.push(c.choices[0].delta.content);
        if (c.choices[0]?.finish_reason) texts.push(`<${c.choices[0].finish_reason}>`);
      }
      if (last.end) break;
    }
    expect(texts).toEqual(["Hello ", "<stop>"]);
    expect(last).toMatchObject({ end: true, cut: true });
  });
});
