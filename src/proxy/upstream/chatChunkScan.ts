/**
 * Which streamed chat chunks a passthrough must parse. Nearly every chunk is a content delta the
 * proxy only relays; the ones it reads carry usage, a finish_reason or an error. Scanning the
 * data text for those keys costs a fraction of JSON.parse, so the rest go out as text.
 *
 * A key inside a JSON string has its quotes escaped (`\"usage\"`), so a quoted key found here is
 * a key, or at worst a string's last word: that only costs a parse, never a missed field.
 */

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** True when the data may carry what the proxy reads, or is not shaped like one JSON object (then parsing reports it). */
export function chatChunkNeedsParse(data: string): boolean {
  if (data.charCodeAt(0) !== OPEN_BRACE || data.charCodeAt(data.length - 1) !== CLOSE_BRACE) return true;
  // `"error` also finds `"type":"error"`; `failed"` a Responses-style `response.failed`.
  if (data.includes('"error') || data.includes('failed"')) return true;
  return hasNonNullValue(data, '"usage"') || hasNonNullValue(data, '"finish_reason"');
}

/** Whether `key` occurs followed by a colon and a value other than `null` (OpenAI sends `"finish_reason":null` on every delta). */
function hasNonNullValue(data: string, key: string): boolean {
  for (let at = data.indexOf(key); at !== -1; at = data.indexOf(key, at + key.length)) {
    let i = skipSpace(data, at + key.length);
    if (data.charCodeAt(i) !== 0x3a) return true; // not `key:`: the last word of a string, or odd JSON: parse to be sure
    i = skipSpace(data, i + 1);
    if (!data.startsWith("null", i)) return true;
  }
  return false;
}

function skipSpace(data: string, i: number): number {
  for (;;) {
    const c = data.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}
