import { TerminalTyping } from "./terminalTyping.ts";

/** Keys sent to the daemon in one request at most: its queue of unread input holds 1 MiB. */
const MAX_KEYS_PER_REQUEST = 64 * 1024;

/**
 * This command's stdin, read as it comes and handed out as the keys that type it into the
 * command's terminal (TerminalTyping), its end included once, after the last of it.
 */
export class PipedInput {
  readonly #typing = new TerminalTyping();
  #keys = "";
  #ended = false;
  #endSent = false;
  readonly #onData = (chunk: string) => {
    this.#keys += this.#typing.type(chunk);
  };
  readonly #onEnd = () => {
    this.#ended = true;
  };

  constructor(private readonly stream: NodeJS.ReadStream) {
    stream.setEncoding("utf8");
    stream.on("data", this.#onData);
    stream.on("end", this.#onEnd);
  }

  /** Keys wait to be sent (read input, or the end of it). */
  get waiting(): boolean {
    return this.#keys.length > 0 || (this.#ended && !this.#endSent);
  }

  /** The keys for the next request: what has been read, then the end once everything before it went. */
  take(): string {
    let cut = Math.min(this.#keys.length, MAX_KEYS_PER_REQUEST);
    // A surrogate pair stays whole (JSON carries no half of one); a ^V may end a request, as the
    // terminal keeps waiting for the character it quotes.
    const last = this.#keys.charCodeAt(cut - 1);
    if (cut < this.#keys.length && last >= 0xd800 && last <= 0xdbff) cut -= 1;
    let keys = this.#keys.slice(0, cut);
    this.#keys = this.#keys.slice(cut);
    if (this.#ended && !this.#endSent && this.#keys.length === 0) {
      keys += this.#typing.end();
      this.#endSent = true;
    }
    return keys;
  }

  close(): void {
    this.stream.off("data", this.#onData);
    this.stream.off("end", this.#onEnd);
    this.stream.pause();
    // Input still open (a terminal, a pipe whose writer lingers) must not keep the command alive.
    this.stream.unref();
  }
}
