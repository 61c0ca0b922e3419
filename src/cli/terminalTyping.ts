/**
 * Piped input as keys typed into a terminal in canonical mode, so the program reads it back byte
 * for byte: `agentd exec -i` runs its command on a pty, not a pipe. Control characters are
 * quoted with ^V (else ^C would interrupt, ^D end input, ^U erase the line), a long line is
 * handed over in pieces with ^D (the line buffer holds 4095 bytes and drops the rest), and the
 * end of input is ^D on an empty line — a second one when the last line has no newline. The
 * command runs with `stty -echo -icrnl -ixon`, so the terminal neither echoes the input nor
 * turns \r into \n or takes ^S/^Q for flow control.
 */

const LNEXT = "\x16";
const EOF = "\x04";
/** Bytes of one line the terminal holds before a ^D hands them over; well under its 4095. */
export const LINE_PIECE = 1024;

/** The stty settings the command runs under with -i (see above). */
export const TYPING_STTY = "stty -echo -icrnl -ixon";

function utf8Length(code: number): number {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

export class TerminalTyping {
  /** Characters typed since the last newline or ^D hand-over. */
  #lineLength = 0;

  /** The keys that type `text`. */
  type(text: string): string {
    let keys = "";
    for (const char of text) {
      const code = char.codePointAt(0)!;
      const quoted = (code < 0x20 && char !== "\n" && char !== "\t") || code === 0x7f;
      const piece = quoted ? LNEXT + char : char;
      const bytes = (quoted ? 1 : 0) + utf8Length(code);
      if (char !== "\n" && this.#lineLength + bytes > LINE_PIECE) {
        keys += EOF;
        this.#lineLength = 0;
      }
      keys += piece;
      this.#lineLength = char === "\n" ? 0 : this.#lineLength + bytes;
    }
    return keys;
  }

  /** The keys that end the input: the program's next read returns 0 bytes. */
  end(): string {
    const keys = this.#lineLength > 0 ? EOF + EOF : EOF;
    this.#lineLength = 0;
    return keys;
  }
}
