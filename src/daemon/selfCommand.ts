/**
 * The argv prefix that runs this same program again: the compiled binary alone, or
 * `bun main.ts` when running from source (tests, development).
 */
export function selfCommand(): string[] {
  const main = Bun.main;
  const compiled = main.startsWith("/$bunfs/") || main.startsWith("B:/~BUN/");
  return compiled ? [process.execPath] : [process.execPath, main];
}
