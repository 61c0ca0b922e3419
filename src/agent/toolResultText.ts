/** The text the model receives for a tool result: strings as they are, anything else as JSON. */
export function toolResultText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "null";
  return JSON.stringify(value);
}

/** Keeps the head and the tail of an over-long result and says how much was cut. */
export function clipToolResult(text: string, maxBytes: number): { text: string; clipped: boolean } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, clipped: false };
  const half = Math.floor(maxBytes / 2);
  const head = text.slice(0, half);
  const tail = text.slice(text.length - half);
  return { text: `${head}\n… [${text.length - head.length - tail.length} characters cut by agentd] …\n${tail}`, clipped: true };
}
