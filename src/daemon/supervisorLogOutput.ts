import { eachLine, formatForOutput, type LogFormat, type RotatingFile } from "../core/log/index.ts";

/**
 * Where the supervisor's lines go, its own and the worker's: stdout in the operator's format and
 * the rotating log file. The lines of one event-loop turn go out together, one stdout write and one
 * file append for all of them: a busy proxy's worker sends thousands of lines a second. The worker's
 * lines stay the bytes they came in as (JSON, the file's format): nothing is decoded and encoded
 * again on their way out.
 */
export class SupervisorLogOutput {
  /** Whole JSON lines, each ended by LF. */
  #held: Uint8Array[] = [];
  #fileProblem: string | undefined;

  constructor(
    private readonly file: RotatingFile,
    private readonly path: string,
    private readonly format: LogFormat,
  ) {}

  /** Holds one line (a JSON log line, without its LF) until the end of this turn. */
  readonly write = (line: string): void => {
    this.writeBlock(Buffer.from(`${line}\n`));
  };

  /** Holds whole JSON lines as bytes, each ended by LF (readLineBlocks), until the end of this turn. */
  readonly writeBlock = (block: Uint8Array): void => {
    if (this.#held.length === 0) setImmediate(this.flush);
    this.#held.push(block);
  };

  /** Writes the held lines now (also called at exit). */
  readonly flush = (): void => {
    if (this.#held.length === 0) return;
    const held = this.#held;
    this.#held = [];
    const data = held.length === 1 ? held[0]! : Buffer.concat(held);
    process.stdout.write(this.format === "json" ? data : humanLines(data, this.format));
    try {
      this.file.append(data);
      this.#fileProblem = undefined;
    } catch (error) {
      // A full disk must not stop the supervisor reading the worker: stdout still gets every line.
      const message = (error as Error).message;
      if (message !== this.#fileProblem) process.stderr.write(`agentd: cannot write ${this.path}: ${message}\n`);
      this.#fileProblem = message;
    }
  };
}

function humanLines(data: Uint8Array, format: LogFormat): string {
  let text = "";
  eachLine(new TextDecoder().decode(data), (line) => {
    text += `${formatForOutput(line, format)}\n`;
  });
  return text;
}
