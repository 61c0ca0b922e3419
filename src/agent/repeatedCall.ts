import { argumentValue } from "./toolArguments.ts";
import type { ChatMessage } from "./sessionStore.ts";

export interface RepeatedCall {
  tool: string;
  /** The arguments as the model wrote them (the first time). */
  arguments: string;
  /** How many times in a row it was made with the same answer. */
  times: number;
}

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same arguments. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "null";
}

/**
 * The call the model keeps making without progress: the last `limit` answered calls of the turn
 * were the same tool with the same arguments and got the same answer. Undefined otherwise (a
 * different call, argument or answer in between counts as progress). Pure: reads the turn's messages.
 */
export function repeatedCall(turnMessages: readonly ChatMessage[], limit: number): RepeatedCall | undefined {
  // Only the last `limit` answers matter: the scan starts where they and the calls they answer are,
  // so a long turn costs the same per step as a short one.
  let start = turnMessages.length;
  let answers = 0;
  const unseen = new Set<string>();
  while (start > 0 && (answers < limit || unseen.size > 0)) {
    const message = turnMessages[--start]!;
    if (message.role === "tool" && answers < limit) {
      answers++;
      unseen.add(String(message.tool_call_id));
    }
    for (const call of callsOf(message)) unseen.delete(call.id);
  }
  const asked = new Map<string, { tool: string; arguments: string }>();
  let last: Answered | undefined;
  let times = 0;
  for (const message of turnMessages.slice(start)) {
    for (const call of callsOf(message)) asked.set(call.id, { tool: call.function.name, arguments: call.function.arguments });
    if (message.role !== "tool") continue;
    const call = asked.get(String(message.tool_call_id));
    if (!call) continue;
    const answered: Answered = { ...call, text: JSON.stringify([call.tool, call.arguments, message.content]), content: message.content };
    if (last && sameAnswer(last, answered)) times++;
    else {
      last = answered;
      times = 1;
    }
  }
  return last && times >= limit ? { tool: last.tool, arguments: last.arguments, times } : undefined;
}

interface Answered {
  tool: string;
  arguments: string;
  content: unknown;
  /** The call and its answer as written: equal text is the same call (the common case, no parsing). */
  text: string;
  canonical?: string;
}

function sameAnswer(a: Answered, b: Answered): boolean {
  if (a.text === b.text) return true;
  a.canonical ??= canonical([a.tool, argumentValue(a.arguments), a.content]);
  b.canonical ??= canonical([b.tool, argumentValue(b.arguments), b.content]);
  return a.canonical === b.canonical;
}

function callsOf(message: ChatMessage): Array<{ id: string; function: { name: string; arguments: string } }> {
  return (message.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }> | undefined) ?? [];
}

/** What the user is told when a turn stops on a repeated call. */
export function repeatedCallMessage(repeat: RepeatedCall): string {
  const args = repeat.arguments.length > 200 ? `${repeat.arguments.slice(0, 200)}…` : repeat.arguments;
  return `The model called ${repeat.tool} ${args} ${repeat.times} times in a row with the same result, so the turn was stopped instead of looping; send a message to steer it`;
}
