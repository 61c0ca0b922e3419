/**
 * Confinement benchmark: what `agentd __confine` (no_new_privs, and Landlock hiding a data dir)
 * adds to starting a command, against starting it directly and through util-linux's
 * `setpriv --no-new-privs` (what agentd used before), in one run.
 * Run: node_modules/.bin/bun bench/confine.ts — needs the compiled ./agentd; prints a markdown table.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

const ROUNDS = 200;
const root = resolve(import.meta.dir, "..");
const agentd = join(root, "agentd");
if (!existsSync(agentd)) throw new Error("bench/confine.ts needs ./agentd: run npm run build first");

// A data dir under a directory agentd's user cannot write (hiding needs that), as /var/lib/agentd is.
const parent = mkdtempSync(join(existsSync("/var/lib") ? "/var/lib" : "/tmp", "agentd-bench-confine-"));
const dataDir = join(parent, "data");
chmodSync(parent, 0o755);
mkdirSync(dataDir);

// Hiding only happens for a non-root agentd: as root, every row runs as nobody (the same wrapper on each, the baseline included).
const asUser = process.getuid?.() === 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] : [];

async function medianMs(command: string[]): Promise<number> {
  const argv = [...asUser, ...command];
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    const child = Bun.spawn(argv, { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    if ((await child.exited) !== 0) throw new Error(`${argv.join(" ")} exited ${child.exitCode}`);
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

try {
  const direct = await medianMs(["/bin/true"]);
  const setpriv = existsSync("/usr/bin/setpriv") ? await medianMs(["/usr/bin/setpriv", "--no-new-privs", "--", "/bin/true"]) : undefined;
  const confined = await medianMs([agentd, "__confine", "--exec", "/bin/true"]);
  const hidden = await medianMs([agentd, "__confine", "--hide", dataDir, "--exec", "/bin/true"]);
  const row = (name: string, ms: number) =>
    `| ${name} | ${ms.toFixed(2)} ms | ×${(ms / direct).toFixed(1)} | +${(ms - direct).toFixed(2)} ms |`;
  console.log(`| start of /bin/true${asUser.length ? " as nobody" : ""}, median of ${ROUNDS} | time | vs direct | added |`);
  console.log("|---|---|---|---|");
  console.log(row("direct (baseline)", direct));
  if (setpriv !== undefined) console.log(row("setpriv --no-new-privs", setpriv));
  console.log(row("agentd __confine (no_new_privs)", confined));
  console.log(row("agentd __confine --hide <data dir> (Landlock)", hidden));
} finally {
  rmSync(parent, { recursive: true, force: true });
}
