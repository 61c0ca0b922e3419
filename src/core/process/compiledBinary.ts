/** True inside the compiled agentd binary, false when running from source (`bun main.ts`, tests). */
export function isCompiledBinary(): boolean {
  const main = Bun.main;
  return main.startsWith("/$bunfs/") || main.startsWith("B:/~BUN/");
}
