import { buildResponse, messageItem, newId, reasoningItem, statusForFinish, usageFromChat, type ResponseShell } from "./responseObject.ts";
import { callItem } from "./responsesTools.ts";
import { UpstreamFailure } from "../upstream/upstreamFailure.ts";

type Json = Record<string, unknown>;

interface ChatToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
}

/**
 * Turns a (non-streamed) chat completion into a Responses `response` object: reasoning, then
 * text, then each tool call as the function or custom tool call the client declared.
 */
export function chatCompletionToResponse(completion: Json, shell: ResponseShell): Json {
  const choice = (completion.choices as Json[] | undefined)?.[0];
  if (!choice) throw new UpstreamFailure("malformed", "the upstream completion has no choices", { status: 200 });
  const message = (choice.message ?? {}) as {
    content?: unknown;
    tool_calls?: ChatToolCall[];
    reasoning_content?: unknown;
    reasoning?: unknown;
  };
  const output: unknown[] = [];
  // DeepSeek, vLLM and others name it `reasoning_content`, OpenRouter `reasoning`.
  const reasoning = typeof message.reasoning_content === "string" ? message.reasoning_content : message.reasoning;
  if (typeof reasoning === "string" && reasoning) output.push(reasoningItem(newId("rs"), reasoning, "completed", shell.summary));
  const text = typeof message.content === "string" ? message.content : "";
  const logprobs = (choice.logprobs as { content?: unknown } | null | undefined)?.content;
  if (text) output.push(messageItem(newId("msg"), text, "completed", Array.isArray(logprobs) ? logprobs : []));
  for (const call of message.tool_calls ?? []) {
    output.push(callItem(shell.toolNames, call.id || newId("call"), call.function?.name ?? "", call.function?.arguments ?? ""));
  }
  const { status, incompleteReason } = statusForFinish(choice.finish_reason);
  return buildResponse(shell, { status, output, usage: usageFromChat(completion.usage), incompleteReason });
}
