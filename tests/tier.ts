/**
 * The test files of one tier, for `npm run test:unit` and `npm run test:e2e`:
 *   e2e  — what runs the compiled binary, a real outside program (sshd, Chromium, Prometheus and
 *          Alertmanager, the coding-agent CLIs) or a real client library against agentd (tests/proxy/client*,
 *          with the clients' own retry waits): every file under tests/e2e and tests/hop, and every file
 *          whose imports (followed through the test helpers) reach one of the helpers that start them;
 *   unit — the rest: agentd's code in the test's own process, loopback servers of its own at most.
 *   bun tests/tier.ts unit|e2e   (prints one path per line)
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const OUTSIDE_PROGRAMS = [
  "tests/support/binary.ts",
  "tests/support/sshd.ts",
  "tests/support/browser.ts",
  "tests/telemetry/support/monitoringServers.ts",
  "tests/proxy/claudeCodeRun.ts",
  "tests/proxy/codexRun.ts",
];
const E2E_PREFIXES = ["tests/e2e/", "tests/hop/", "tests/proxy/client"];

function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((path) => /\.test\.tsx?$/.test(path))
    .map((path) => join(dir, path))
    .sort();
}

const importsOf = new Map<string, string[]>();
function localImports(file: string): string[] {
  let found = importsOf.get(file);
  if (found) return found;
  const text = readFileSync(join(ROOT, file), "utf8");
  found = [...text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)]
    .map((match) => relative(ROOT, resolve(ROOT, dirname(file), match[1]!)))
    .filter((path) => path.startsWith("tests/"));
  importsOf.set(file, found);
  return found;
}

function reachesOutside(file: string, seen = new Set<string>()): boolean {
  if (OUTSIDE_PROGRAMS.includes(file)) return true;
  if (seen.has(file)) return false;
  seen.add(file);
  return localImports(file).some((next) => reachesOutside(next, seen));
}

export function tierOf(file: string): "unit" | "e2e" {
  return E2E_PREFIXES.some((prefix) => file.startsWith(prefix)) || reachesOutside(file) ? "e2e" : "unit";
}

if (import.meta.main) {
  const wanted = process.argv[2];
  if (wanted !== "unit" && wanted !== "e2e") {
    process.stderr.write("usage: bun tests/tier.ts unit|e2e\n");
    process.exit(2);
  }
  for (const file of testFiles("tests")) if (tierOf(file) === wanted) process.stdout.write(`./${file}\n`);
}
