/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): reading a client's `traceparent` and
 * making new trace and span ids. Ids are lowercase hex, as OTLP's JSON encoding carries them.
 */

export interface ParentContext {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const HEADER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * The parent a `traceparent` header names, or undefined when it is malformed (the span then starts
 * a trace of its own). Version 00 has exactly four fields; a later version may append more, which
 * are ignored; version ff is invalid, as are all-zero ids.
 */
export function parseTraceparent(header: string): ParentContext | undefined {
  const match = HEADER.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** The header naming a span: version 00, sampled or not. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`;
}

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

/**
 * `bytes` random bytes as hex, never all zeros; drawn from a pool refilled 4 KiB at a time (one
 * getRandomValues per ~170 spans), and made one flat string by the runtime, not pieced together.
 */
function randomHex(bytes: number): string {
  for (;;) {
    if (poolAt + bytes > POOL_BYTES) {
      crypto.getRandomValues(pool);
      poolAt = 0;
    }
    const start = poolAt;
    poolAt += bytes;
    for (let i = start; i < poolAt; i++) if (pool[i] !== 0) return pool.toString("hex", start, poolAt);
  }
}

export const newTraceId = (): string => randomHex(16);
export const newSpanId = (): string => randomHex(8);
