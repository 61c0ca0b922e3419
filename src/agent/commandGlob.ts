/** Collapses runs of whitespace so "sudo   systemctl" and "sudo systemctl" match the same rules. */
export function normalizeCommandLine(command: string): string {
  return command.trim().replace(/\s+/g, " ");
}

/**
 * Whole-string glob match on a command line: `*` matches any run of characters (slashes and
 * spaces included), `?` one character; everything else is literal.
 */
export function matchesCommandGlob(pattern: string, command: string): boolean {
  const source = normalizeCommandLine(pattern)
    .split("")
    .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`, "s").test(normalizeCommandLine(command));
}

/** True when any command of a shell line runs through sudo ("sudo x", "cd /; sudo x", "a && sudo -u b x"). */
export function invokesSudo(command: string): boolean {
  return /(^|[;&|(`]|\$\()\s*(env\s+(\S+=\S*\s+)*)?sudo(\s|$)/.test(command.trim());
}
