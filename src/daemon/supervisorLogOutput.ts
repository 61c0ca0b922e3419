import { formatForOutput, type LogFormat, type RotatingFile } from "../core/log/index.ts";

/**
 * Where the supervisor's lines go, its own and the worker's: stdout in the operator's format and
 * the rotating log file. The lines of one event-loop turn go out together, one stdout write and one
 * file append for all of them: a busy proxy's worker sends hundreds of lines a second.
 */
export class SupervisorLogOutput {
  #held: string[] = [];
  #fileProblem: string | undefined;

  constructor(
    private readonly file: RotatingFile,
    private readonly path: string,
    private readonly format: LogFormat,
  ) {}

  /** Holds one line (a JSON log line) until the end of this turn. */
  readonly write = (line: string): void => {
    if (this.#held.length === 0) setImmediate(this.flush);
    this.#held.push(line);
  };

  /** Writes the held lines now (also called at exit). */
  readonly flush = (): void => {
    if (this.#held.length === 0) return;
    const lines = this.#held;
    this.#held = [];
    process.stdout.write(
      `${this.format === "json" ? lines.join("\n") : lines.map((line) => formatForOutput(line, this.format)).join("\n")}\n`,
    );
    try {
      this.file.writeLines(lines);
      this.#fileProblem = undefined;
    } catch (error) {
      // A full disk must not stop the supervisor reading the worker: stdout still gets every line.
      const message = (error as Error).message;
      if (message !== this.#fileProblem) process.stderr.write(`agentd: cannot write ${this.path}: ${message}\n`);
      this.#fileProblem = message;
    }
  };
}
