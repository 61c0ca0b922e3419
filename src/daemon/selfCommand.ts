import { isCompiledBinary } from "../core/process/compiledBinary.ts";

/**
 * The argv prefix that runs this same program again: the compiled binary alone, or
 * `bun main.ts` when running from source (tests, development).
 */
export function selfCommand(): string[] {
  return isCompiledBinary() ? [process.execPath] : [process.execPath, Bun.main];
}
