/**
 * What the CLI prints comes largely from the daemon: log lines, incident titles, command output the
 * model chose. Printed raw, a control sequence in it (OSC 52 writes the operator's clipboard,
 * ESC[2K erases a line, \r hides what came before) would act on the operator's terminal. Every C0
 * and C1 control but newline and tab is shown as `\xHH` instead.
 */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

export function escapeControls(text: string): string {
  return text.replace(CONTROL, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

type Write = typeof process.stdout.write;
const originals = new Map<NodeJS.WriteStream, Write>();

/** Makes every string the process prints on stdout and stderr safe for a terminal, until restored. */
export function guardTerminalOutput(): () => void {
  for (const stream of [process.stdout, process.stderr]) {
    if (originals.has(stream)) continue;
    const write = stream.write.bind(stream) as Write;
    originals.set(stream, write);
    stream.write = ((chunk: unknown, ...rest: unknown[]) =>
      (write as (chunk: unknown, ...rest: unknown[]) => boolean)(
        typeof chunk === "string" ? escapeControls(chunk) : chunk,
        ...rest,
      )) as Write;
  }
  return () => {
    for (const [stream, write] of originals) stream.write = write;
    originals.clear();
  };
}

/** Writes text the CLI made itself (a progress bar redrawn with \r), past the guard. */
export function writeOwnText(stream: NodeJS.WriteStream, text: string): void {
  (originals.get(stream) ?? stream.write.bind(stream))(text);
}
