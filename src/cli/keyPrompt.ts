export const CTRL_C = "\x03";

/**
 * One key press read from the terminal in raw mode: no Enter needed. Cancelable, so a question
 * answered elsewhere (the page, another CLI) stops waiting. Ctrl-C arrives here as a key (raw
 * mode turns off the signal), and the caller decides what it means.
 */
export class KeyPrompt {
  #finish?: (key: string | undefined) => void;

  static available(): boolean {
    return process.stdin.isTTY === true && typeof process.stdin.setRawMode === "function";
  }

  /** Writes the question and resolves with the first key pressed, or undefined when cancelled. */
  ask(question: string): Promise<string | undefined> {
    this.cancel();
    // Through the output guard: the question quotes the model's command.
    process.stderr.write(question);
    const stdin = process.stdin;
    return new Promise((resolve) => {
      const onData = (chunk: Buffer | string) => finish(String(chunk)[0]);
      const finish = (key: string | undefined) => {
        stdin.off("data", onData);
        stdin.setRawMode(false);
        stdin.pause();
        // A paused terminal must not keep the command alive once it has nothing else to do.
        stdin.unref();
        this.#finish = undefined;
        resolve(key);
      };
      this.#finish = finish;
      stdin.ref();
      stdin.setRawMode(true);
      stdin.on("data", onData);
      stdin.resume();
    });
  }

  get waiting(): boolean {
    return this.#finish !== undefined;
  }

  cancel(): void {
    this.#finish?.(undefined);
  }
}
