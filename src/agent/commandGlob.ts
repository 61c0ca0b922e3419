/** Collapses runs of whitespace so "sudo   systemctl" and "sudo systemctl" match the same rules. */
function normalizeCommandLine(command: string): string {
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

/**
 * True when the line could run sudo anywhere: any word "sudo" counts, after a path, a quote, a
 * newline, a wrapper (bash -c, nohup, xargs) or an assignment. Shell syntax is too rich to parse
 * here, and a needless question is the safe mistake; "grep sudo /etc/group" asks too. A command
 * built at run time (x=su; ${x}do) cannot be seen in the text: approvals are no sandbox.
 */
export function invokesSudo(command: string): boolean {
  // The shell drops quotes, backslashes and line continuations before it runs a word: su''do, s\udo
  // and "sud"o are sudo, and so is a brace expansion {sudo,id}.
  const words = command.replace(/\\\n/g, "").replace(/["'\\]/g, "");
  return /(^|[^\w.-])sudo($|[^\w.-])/m.test(words);
}
