import { parseJsonObject, withinDeadline } from "../../http/requestBody.ts";
import { ProxyError } from "../upstream/proxyError.ts";

/**
 * Reads the client's JSON object body, keeping its text, refusing one over `maxBytes` with 413:
 * at once from Content-Length when sent, else while reading (a chunked upload is never held whole
 * past the limit). Done here rather than by a middleware: one less step on every request.
 */
export function readJsonObject(
  request: Request,
  maxBytes: number,
  deadlineMs?: number,
): Promise<{ raw: string; body: Record<string, unknown> }> {
  // A sender that trickles its body must not hold the connection (and its slot) forever. Parsed
  // as the read ends: no async step of its own.
  return withinDeadline(readBoundedText(request, maxBytes), deadlineMs, parsedBody);
}

function parsedBody(raw: string): { raw: string; body: Record<string, unknown> } {
  return { raw, body: parseJsonObject(raw) };
}

/** Not async on the common path (a declared length): the runtime's own promise, without a layer around it. */
function readBoundedText(request: Request, maxBytes: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared === null) return readChunked(request, maxBytes);
  if (Number(declared) > maxBytes) return Promise.reject(bodyTooLarge(maxBytes));
  // The server stops reading at the declared length, so the text cannot exceed it.
  return request.text();
}

async function readChunked(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw bodyTooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

function bodyTooLarge(maxBytes: number): ProxyError {
  return new ProxyError("body_too_large", `The request body exceeds ${maxBytes} bytes`);
}

/** Headers every proxied answer carries: which provider answered, and what agentd itself added. */
export function agentdHeaders(provider: string, overheadMs: number, into: Record<string, string>): Record<string, string> {
  into["x-agentd-provider"] = provider;
  into["x-agentd-overhead-ms"] = overheadMs.toFixed(3);
  return into;
}
