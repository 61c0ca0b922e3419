/**
 * Command output as a terminal wrote it, made readable as plain text: ANSI escape sequences
 * (colours, cursor moves, OSC titles and links) removed, so neither the page nor `agentd run`
 * shows `\x1b[31m` or a box where a colour was. Pure.
 */

// CSI (ESC [ or the 8-bit 0x9b): parameters, intermediates, one final byte.
const CSI = "(?:\\x1b\\[|\\x9b)[0-?]*[ -/]*[@-~]";
// OSC, DCS, SOS, PM and APC strings run to BEL or the string terminator (ESC \ or 0x9c), or to the end when cut off.
const STRING = "(?:\\x1b[\\]PX^_]|[\\x90\\x9d\\x98\\x9e\\x9f])[^\\x07\\x1b\\x9c]*(?:\\x07|\\x1b\\\\|\\x9c|$)";
// Any other escape: ESC, intermediates (a charset choice such as ESC ( B), one final byte; else a stray ESC alone.
const OTHER = "\\x1b[ -/]*[0-~]|\\x1b";
const ANSI = new RegExp(`${CSI}|${STRING}|${OTHER}`, "g");

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/**
 * `text` without escape sequences, CRLF as LF and a lone CR (a progress line redrawn) as a line
 * break, so every frame stays visible instead of one hiding another.
 */
export function terminalText(text: string): string {
  return stripAnsi(text).replace(/\r+\n/g, "\n").replace(/\r/g, "\n");
}
