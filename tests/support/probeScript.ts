import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, PROJECT_ROOT } from "./binary.ts";
import { makeTempDir } from "./tempDir.ts";

/** `import(…)` of a project file, as a line of a probe script. */
export const importLine = (file: string, names?: string): string =>
  `${names ? `const ${names} = ` : ""}await import(${JSON.stringify(join(PROJECT_ROOT, file))});`;

/**
 * Runs `lines` as a script in a fresh Bun process (a clean module cache) and returns the JSON its
 * last line of output printed; the script must write nothing to stderr and exit 0. Callers clean
 * up with removeTempDirs().
 */
export async function runProbeScript<T>(lines: readonly string[]): Promise<T> {
  const script = join(makeTempDir("agentd-probe-"), "probe.ts");
  writeFileSync(script, lines.join("\n"));
  const proc = Bun.spawn([BUN, script], { stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(err).toBe("");
  expect(code).toBe(0);
  return JSON.parse(out.trim().split("\n").at(-1)!) as T;
}
