import { eachLine } from "../core/log/index.ts";

/** Text as it came: one line (`push`), or whole lines each ended by LF (`pushBlock`). */
interface Piece {
  text: string;
  lines: number;
  block: boolean;
}

/**
 * The last `capacity` lines seen, oldest first when read. The worker's lines come a read at a time,
 * hundreds in a block on a busy proxy: a block is kept whole and cut into lines only when they are
 * read (an incident's report, rarely), so keeping a line costs its share of the block and no more.
 */
export class RecentLines {
  /** Dropped pieces are cleared in place, and the array cut down now and then: not moved at every drop. */
  #pieces: Array<Piece | undefined> = [];
  /** The oldest piece still kept. */
  #first = 0;
  #lines = 0;

  constructor(private readonly capacity: number) {}

  push(line: string): void {
    this.#add({ text: line, lines: 1, block: false });
  }

  /**
   * Whole lines, each ended by LF (a CR before it is dropped, as eachLine does); a last line without
   * one counts too. `lines`, how many there are, when the caller counted them already.
   */
  pushBlock(text: string, lines = lineCount(text)): void {
    if (lines > 0) this.#add({ text, lines, block: true });
  }

  /** A copy, oldest first. */
  list(): string[] {
    const lines: string[] = [];
    for (let i = this.#first; i < this.#pieces.length; i++) {
      const piece = this.#pieces[i]!;
      if (piece.block) eachLine(piece.text, (line) => lines.push(line));
      else lines.push(piece.text);
    }
    return lines.length > this.capacity ? lines.slice(lines.length - this.capacity) : lines;
  }

  #add(piece: Piece): void {
    this.#pieces.push(piece);
    this.#lines += piece.lines;
    // The oldest piece goes once the newer ones hold every line kept without it.
    while (this.#first < this.#pieces.length) {
      const oldest = this.#pieces[this.#first]!;
      if (this.#lines - oldest.lines < this.capacity) break;
      this.#lines -= oldest.lines;
      this.#pieces[this.#first++] = undefined;
    }
    if (this.#first >= 64 && this.#first * 2 >= this.#pieces.length) {
      this.#pieces = this.#pieces.slice(this.#first);
      this.#first = 0;
    }
  }
}

function lineCount(text: string): number {
  let lines = 0;
  for (let start = 0; start < text.length; lines++) {
    const newline = text.indexOf("\n", start);
    start = newline < 0 ? text.length : newline + 1;
  }
  return lines;
}
