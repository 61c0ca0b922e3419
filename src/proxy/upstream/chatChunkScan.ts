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

/**
 * One pass of the runtime's compiled matcher over the text, where four searches each went over it
 * whole. `"error` also finds `"type":"error"`; `failed"` a Responses-style `response.failed`;
 * `usage` and `finish_reason` count unless followed by a colon and `null` (OpenAI sends
 * `"finish_reason":null` on every delta), with JSON's own whitespace between. JSON may write any
 * letter as an escape (`"\u0075sage"` is `"usage"`): a printable ASCII escape costs a parse, where
 * the non-ASCII ones that ASCII-only encoders write into content (`\u00e9`) do not.
 */
const MAY_CARRY = /"error|failed"|"(?:usage|finish_reason)"(?![ \t\n\r]*:[ \t\n\r]*null)/;
/** Looked for only in a chunk that has a `\u00` at all: in the matcher above it cost a streamed chunk a third more. */
const ASCII_ESCAPE = /\\u00[2-7][0-9a-fA-F]/;

/** True when the data may carry what the proxy reads, or is not shaped like one JSON object (then parsing reports it). */
export function chatChunkNeedsParse(data: string): boolean {
  return (
    data.charCodeAt(0) !== OPEN_BRACE ||
    data.charCodeAt(data.length - 1) !== CLOSE_BRACE ||
    MAY_CARRY.test(data) ||
    (data.includes("\\u00") && ASCII_ESCAPE.test(data))
  );
}
