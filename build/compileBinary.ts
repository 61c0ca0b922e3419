/**
 * Builds the agentd binary (`npm run build`):
 *
 *   node_modules/.bin/bun build/compileBinary.ts --outfile agentd
 *
 * One executable with code splitting (each dynamic import() a chunk with its own bytecode), its
 * bytecode laid out by the recorded profiles (build/bytecode-order/, idle processes first, then a
 * hop), a sourcemap for stack traces, and neither .env nor bunfig.toml read where it runs. Through
 * Bun.build rather than `bun build` for the plugin that trims ssh2 (build/ssh2Trim.ts).
 */
import { join } from "node:path";
import { ssh2Trim } from "./ssh2Trim.ts";

const ROOT = join(import.meta.dir, "..");
const PROFILES = ["worker", "supervisor", "hop"].map((name) => join(ROOT, "build", "bytecode-order", `${name}.txt`));

function outfileArgument(argv: readonly string[]): string {
  const at = argv.indexOf("--outfile");
  const outfile = at >= 0 ? argv[at + 1] : undefined;
  if (!outfile || argv.length !== 2) throw new Error("usage: bun build/compileBinary.ts --outfile FILE");
  return outfile;
}

const outfile = outfileArgument(process.argv.slice(2));
const result = await Bun.build({
  entrypoints: [join(ROOT, "main.ts")],
  compile: { outfile, autoloadDotenv: false, autoloadBunfig: false, bytecodeOrder: PROFILES },
  splitting: true,
  bytecode: true,
  minify: true,
  format: "esm",
  // As `bun build` names them (the API's default is chunk-[hash]).
  naming: { chunk: "[name]-[hash].[ext]" },
  sourcemap: "linked",
  plugins: [ssh2Trim],
  throw: false,
});
for (const log of result.logs) console.error(String(log));
if (!result.success) process.exit(1);
