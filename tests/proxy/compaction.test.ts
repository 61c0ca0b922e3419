import { afterEach, describe, expect, test } from "bun:test";
import {
  asksForCompaction,
  compactionInput,
  compactionItem,
  compactionMessage,
  compactionSummary,
} from "../../src/proxy/translate/compaction.ts";
import { inputToMessages } from "../../src/proxy/translate/responsesInputToChat.ts";
import { type ClientPath, startPath } from "./clientPaths.ts";

const user = (text: string) => ({ type: "message", role: "user", content: text });
const TRIGGER = { type: "compaction_trigger" };

describe("compaction items (pure)", () => {
  test("only a trigger as the last item asks for a compaction", () => {
    expect(asksForCompaction([user("hi"), TRIGGER])).toBe(true);
    expect(asksForCompaction([TRIGGER, user("hi")])).toBe(false);
    expect(asksForCompaction("hi")).toBe(false);
    expect(asksForCompaction([])).toBe(false);
  });

  test("the compaction input is the conversation without the trigger, then the request for a summary", () => {
    const input = compactionInput([user("hi"), TRIGGER]);
    expect(input).toHaveLength(2);
    expect(input[0]).toEqual(user("hi"));
    expect(JSON.stringify(input[1])).toContain("Compact this conversation now");
  });

  test("agentd's item carries the summary, unicode included, and reads back as a user message", () => {
    const item = compactionItem("Ran ls — found ünïcode.txt");
    expect(item.type).toBe("compaction");
    expect(String(item.id)).toMatch(/^cmp_/);
    expect(compactionSummary(item)).toBe("Ran ls — found ünïcode.txt");
    const messages = inputToMessages([user("goal"), item, user("go on")]);
    expect(messages.map((m) => m.role)).toEqual(["user", "user", "user"]);
    expect(messages[1]).toEqual(compactionMessage("Ran ls — found ünïcode.txt"));
  });

  test("another server's encrypted compaction cannot be read: dropped and reported, never sent as garbage", () => {
    const dropped: string[] = [];
    const messages = inputToMessages([{ type: "compaction", encrypted_content: "gAAAAB-opaque" }, user("hi")], dropped);
    expect(messages).toEqual([{ role: "user", content: "hi" }]);
    expect(dropped).toEqual(["input.compaction"]);
    expect(compactionSummary({ type: "compaction" })).toBeUndefined();
  });
});

let path: ClientPath | undefined;
afterEach(async () => {
  await path?.close();
  path = undefined;
});

async function post(baseURL: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${baseURL}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer client-key" },
    body: JSON.stringify(body),
  });
}

describe("compaction_trigger over HTTP", () => {
  test("chat upstream, not streamed: one compaction item, and a later request reads its summary", async () => {
    path = startPath("chat");
    path.up.enqueue({ kind: "text", text: "They said hi." }, { kind: "text", text: "Hello again." });
    const response = await post(path.baseURL, { model: "gpt-x", input: [user("hi"), TRIGGER] });
    expect(response.status).toBe(200);
    const compacted = (await response.json()) as Record<string, any>;
    expect(compacted.status).toBe("completed");
    expect(compacted.output).toHaveLength(1);
    expect(compacted.output[0].type).toBe("compaction");
    expect(compacted.usage.input_tokens).toBeGreaterThan(0);
    const next = await post(path.baseURL, { model: "gpt-x", input: [user("hi"), compacted.output[0], user("and now?")] });
    expect(next.status).toBe(200);
    const sent = JSON.stringify(path.up.completionRequests()[1]!.body.messages);
    expect(sent).toContain("They said hi.");
    expect(sent).not.toContain("Compact this conversation now");
    expect(path.h.events("proxy.request").filter((r) => r.outcome === "ok")).toHaveLength(2);
  });

  test("chat upstream, streamed: the Responses events of one compaction item", async () => {
    path = startPath("chat");
    path.up.enqueue({ kind: "text", text: "Summary." });
    const response = await post(path.baseURL, { model: "gpt-x", stream: true, input: [user("hi"), TRIGGER] });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = (await response.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, any>);
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events[3]!.response.output[0].type).toBe("compaction");
  });

  test("a model that writes no summary is an upstream error, not an empty compaction", async () => {
    path = startPath("chat");
    path.up.setDefault({ kind: "text", text: "" });
    const response = await post(path.baseURL, { model: "gpt-x", input: [user("hi"), TRIGGER] });
    expect(response.status).toBe(502);
    expect(((await response.json()) as Record<string, any>).error.code).toBe("upstream_error");
  });

  test("a Responses upstream gets the trigger as sent: it compacts natively", async () => {
    path = startPath("responses");
    await post(path.baseURL, { model: "gpt-x", input: [user("hi"), TRIGGER] });
    expect(JSON.stringify(path.up.completionRequests()[0]!.body.input)).toContain("compaction_trigger");
  });
});
