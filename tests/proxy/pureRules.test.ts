import { describe, expect, test } from "bun:test";
import { applyQuirks, detectRejectedParam } from "../../src/proxy/upstream/quirkRules.ts";
import { normalizeBaseUrl } from "../../src/proxy/upstream/upstreamUrl.ts";

describe("base_url normalisation", () => {
  test("strips trailing slashes and pasted endpoints", () => {
    expect(normalizeBaseUrl("https://api.example.com/v1/")).toBe("https://api.example.com/v1");
    expect(normalizeBaseUrl("https://api.example.com/v1/chat/completions")).toBe("https://api.example.com/v1");
    expect(normalizeBaseUrl("https://api.example.com/v1/responses/")).toBe("https://api.example.com/v1");
    expect(normalizeBaseUrl("http://127.0.0.1:8000")).toBe("http://127.0.0.1:8000");
  });
});

describe("quirk detection", () => {
  const body = {
    model: "m",
    messages: [],
    parallel_tool_calls: true,
    stream_options: { include_usage: true },
    max_completion_tokens: 5,
    tools: [{ type: "function", function: { name: "f", strict: true } }],
  };
  test("names the rejected optional parameter the request carries", () => {
    expect(detectRejectedParam(400, "Unsupported parameter: 'stream_options'", body)).toBe("stream_options");
    expect(
      detectRejectedParam(422, '{"detail":[{"loc":["body","tools",0,"function","strict"],"msg":"Extra inputs are not permitted"}]}', body),
    ).toBe("strict");
    expect(detectRejectedParam(400, "Unrecognized request argument supplied: seed", body)).toBeUndefined();
    expect(detectRejectedParam(400, "parallel_tool_calls must be a boolean", body)).toBeUndefined();
    expect(detectRejectedParam(500, "Unsupported parameter: 'stream_options'", body)).toBeUndefined();
  });
  test("applies drops and the max_tokens rename", () => {
    const copy = structuredClone(body) as Record<string, unknown>;
    applyQuirks(copy, ["strict", "max_completion_tokens", "parallel_tool_calls"]);
    expect(copy).toEqual({
      model: "m",
      messages: [],
      stream_options: { include_usage: true },
      max_tokens: 5,
      tools: [{ type: "function", function: { name: "f" } }],
    });
  });
});
