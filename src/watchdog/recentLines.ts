/**
 * The last `capacity` lines seen, oldest first when read. A ring: the supervisor keeps every line
 * the worker writes, thousands a second on a busy proxy, and an array's shift() moves them all.
 */
export class RecentLines {
  readonly #lines: string[] = [];
  #next = 0;

  constructor(private readonly capacity: number) {}

  push(line: string): void {
    if (this.#lines.length < this.capacity) this.#lines.push(line);
    else this.#lines[this.#next] = line;
    this.#next = (this.#next + 1) % this.capacity;
  }

  /** A copy, oldest first. */
  list(): string[] {
    if (this.#lines.length < this.capacity) return this.#lines.slice();
    return [...this.#lines.slice(this.#next), ...this.#lines.slice(0, this.#next)];
  }
}
