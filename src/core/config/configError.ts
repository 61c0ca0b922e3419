import { AgentdError } from "../errors/index.ts";

export interface ConfigLocation {
  file: string;
  line: number;
  column: number;
}

/** A config problem, printed as `file:line:col: path: message` (the shape editors jump to). */
export class ConfigError extends AgentdError {
  readonly location?: ConfigLocation;
  readonly path: string;
  readonly reason: string;

  /** Every problem found, in file order (this error is the first). */
  readonly problems: readonly ConfigError[];

  constructor(reason: string, options: { location?: ConfigLocation; path?: string; message?: string } = {}) {
    const where = options.location ? `${options.location.file}:${options.location.line}:${options.location.column}: ` : "";
    const path = options.path ? `${options.path}: ` : "";
    super("invalid_config", options.message ?? `${where}${path}${reason}`);
    this.location = options.location;
    this.path = options.path ?? "";
    this.reason = reason;
    this.problems = [this];
  }

  /** One error for several problems: the first one's fields, a message with one line per problem. */
  static all(problems: readonly ConfigError[]): ConfigError {
    const [first] = problems;
    if (!first || problems.length === 1) return first ?? new ConfigError("invalid config");
    const error = new ConfigError(first.reason, {
      location: first.location,
      path: first.path,
      message: problems.map((p) => p.message).join("\n"),
    });
    (error as { problems: readonly ConfigError[] }).problems = problems;
    return error;
  }
}

/** `providers[0].base_url` from a path of keys and indexes. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out;
}

/** 1-based line and column of a character offset. */
export function offsetToLineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}
