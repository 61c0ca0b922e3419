/**
 * `bun run bench [name…]`: runs every bench/*.ts (or only the named ones) in sequence, each as its
 * own process so one bench's memory and timers cannot skew the next, and passes their tables through.
 */
import { readdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const bun = join(root, "node_modules", ".bin", "bun");
const available = readdirSync(import.meta.dir)
  .filter((file) => file.endsWith(".ts") && file !== basename(import.meta.path))
  .map((file) => file.slice(0, -3))
  .sort();

const wanted = process.argv.slice(2).map((name) => name.replace(/^bench\//, "").replace(/\.ts$/, ""));
const unknown = wanted.filter((name) => !available.includes(name));
if (unknown.length) {
  process.stderr.write(`bench: no bench named ${unknown.join(", ")}; available: ${available.join(", ")}\n`);
  process.exit(2);
}

let failed = 0;
for (const name of wanted.length ? wanted : available) {
  process.stdout.write(`\n## ${name}\n\n`);
  const child = Bun.spawn([bun, join("bench", `${name}.ts`)], { cwd: root, stdin: "ignore", stdout: "inherit", stderr: "inherit" });
  const code = await child.exited;
  if (code !== 0) {
    failed++;
    process.stderr.write(`bench: ${name} exited with ${code}\n`);
  }
}
process.exit(failed ? 1 : 0);
