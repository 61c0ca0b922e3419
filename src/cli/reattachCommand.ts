/** One shell word as a person can paste it back: bare when safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The options that found the daemon; the token is left out (it is a secret, and found again the same way). */
const LOCATION_OPTIONS = ["url", "config", "data-dir"] as const;

/**
 * The exact command that follows a session again from where a detached command left it: the same
 * daemon (the location options it was given), and for an agent session the next event after the
 * last one printed, for a terminal on a hop that hop.
 */
export function reattachCommand(
  sessionId: string,
  where: { after?: number; on?: string },
  values: Record<string, string | boolean | undefined>,
): string {
  const words = ["agentd", "attach", sessionId];
  if (where.after !== undefined) words.push("--after", String(where.after));
  if (where.on !== undefined && where.on !== "local") words.push("--on", where.on);
  for (const name of LOCATION_OPTIONS) {
    const value = values[name];
    if (typeof value === "string") words.push(`--${name}`, value);
  }
  return words.map(shellWord).join(" ");
}
