// CSI (colours, cursor moves), OSC (titles, hyperlinks; ended by BEL or ST), and two-byte escapes.
const ANSI_SEQUENCE = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_=>78]/g;

/** Removes terminal escape sequences, for callers that asked for plain text (`strip_ansi`). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_SEQUENCE, "");
}
