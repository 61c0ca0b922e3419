/**
 * Two agentd builds (or configs, or environments) A and B against the same bare relay, upstream
 * and load client, rounds of relay, A and B interleaved: for judging a change, where bench/relay.ts
 * gives the figures against the floor. B/A is the median of the paired rounds' ratios. Run it
 * with no options first, A against itself, to see the noise: on the 2-core VM this was written on,
 * A/A came within ±3 % while the host was quiet and within ±5 % while it was busy, pinned or not.
 * Keep both binaries on the same file system: the same binary cost ×1.06 at c=32 run from tmpfs
 * (/dev/shm) against a copy on ext4, enough to pass for a change.
 *
 *   node_modules/.bin/bun bench/compare.ts --a /tmp/agentd-before --b ./agentd --pin 0
 *   node_modules/.bin/bun bench/compare.ts --config-b '{"telemetry":{"otlp":{"endpoint":"COLLECTOR"}}}'
 *   node_modules/.bin/bun bench/compare.ts --tls --config-a '{"proxy":{"upstream_client":"fetch"}}'
 *
 * Options: --a/--b binaries (default ./agentd); --config-a/--config-b JSON merged into each one's
 * config (COLLECTOR names the bench's OTLP collector stand-in); --env-a/--env-b JSON added to each
 * one's environment; --pin CPU (all processes on that CPU; default: where the scheduler puts them);
 * --rounds N (default 15); --rows c32,c1,stream (default all three); --tls (the upstream, and so
 * agentd's and the relay's calls to it, on HTTPS: a throwaway CA trusted through
 * NODE_EXTRA_CA_CERTS). With no options it compares
 * ./agentd with itself: the noise of the measure on this machine.
 */
import { parseArgs } from "node:util";
import { ensureBinary } from "../tests/support/binary.ts";
import { BenchRig } from "./support/benchRig.ts";
import { measureRows, pairedRatio, ROWS, Side } from "./support/loadSides.ts";

const OPTIONS = {
  a: { type: "string" },
  b: { type: "string" },
  "config-a": { type: "string", default: "{}" },
  "config-b": { type: "string", default: "{}" },
  "env-a": { type: "string", default: "{}" },
  "env-b": { type: "string", default: "{}" },
  pin: { type: "string" },
  rounds: { type: "string", default: "15" },
  rows: { type: "string", default: "c32,c1,stream" },
  tls: { type: "boolean", default: false },
} as const;

type RowName = keyof typeof ROWS;

/** A bad option: said in one line, before any process is started. */
function refuse(message: string): never {
  process.stderr.write(`bench/compare: ${message}\n`);
  process.exit(2);
}

function parseOptions() {
  try {
    return parseArgs({ options: OPTIONS }).values;
  } catch (error) {
    refuse((error as Error).message);
  }
}

const values = parseOptions();

function jsonOption(name: string, text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Refused below.
  }
  refuse(`Cannot read --${name} as a JSON object: current value is ${text}`);
}

for (const name of ["config-a", "config-b", "env-a", "env-b"] as const) jsonOption(name, values[name]);
const rows = values.rows.split(",").map((name) => {
  if (!(name in ROWS)) refuse(`Cannot run row ${name}: rows are ${Object.keys(ROWS).join(", ")}`);
  return name as RowName;
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) refuse(`Cannot run ${values.rounds} rounds: give a whole number ≥ 1`);

if (!values.a || !values.b) await ensureBinary();
const rig = await BenchRig.start({ tls: values.tls });
try {
  const collector = [values["config-a"], values["config-b"]].some((text) => text.includes("COLLECTOR")) ? await rig.collectorUrl() : "";
  const start = (name: "a" | "b", bin: string | undefined) =>
    rig.startAgentd(name, jsonOption(`config-${name}`, values[`config-${name}`].replaceAll("COLLECTOR", collector)), {
      bin,
      env: jsonOption(`env-${name}`, values[`env-${name}`]) as Record<string, string>,
    });
  const a = await start("a", values.a);
  const b = await start("b", values.b);
  const trio = () => [new Side(rig.relayUrl, () => [rig.relayPid]), new Side(a.url, a.pids), new Side(b.url, b.pids)];
  const measured = new Map<RowName, Side[]>();
  const run = async () => {
    const sides = await measureRows(
      trio,
      rows.map((name) => ROWS[name]),
      rounds,
    );
    for (const [i, name] of rows.entries()) measured.set(name, sides[i]!);
  };
  if (await rig.placed(values.pin, run)) printTable(measured);
  else process.exitCode = 1;
} finally {
  await rig.stop();
}

function printTable(measured: Map<RowName, Side[]>): void {
  const us = (side: Side) => side.cpuPerRequestUs().toFixed(1);
  const ms = (side: Side, of: number[]) => side.p50(of).toFixed(3);
  console.log(`\nA: ${values.a ?? "./agentd"} ${values["config-a"]} ${values["env-a"]}`);
  console.log(`B: ${values.b ?? "./agentd"} ${values["config-b"]} ${values["env-b"]}`);
  console.log(
    `${values.tls ? "HTTPS upstream, " : ""}${values.pin === undefined ? "placed by the scheduler" : `all on CPU ${values.pin}`}, ${rounds} rounds a row\n`,
  );
  console.log("| measure | relay | A | B | B/A |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const name of rows) {
    const [relay, sideA, sideB] = measured.get(name) as [Side, Side, Side];
    const label = ROWS[name].label;
    console.log(
      `| CPU per request, ${label} (µs) | ${us(relay)} | ${us(sideA)} | ${us(sideB)} | ×${pairedRatio(sideB, sideA).toFixed(3)} |`,
    );
    const of = ROWS[name].stream ? (side: Side) => side.ttfb : (side: Side) => side.ms;
    const what = ROWS[name].stream ? "TTFB" : "latency";
    if (name !== "c32")
      console.log(
        `| p50 ${what}, ${label} (ms) | ${ms(relay, of(relay))} | ${ms(sideA, of(sideA))} | ${ms(sideB, of(sideB))} | ${(sideB.p50(of(sideB)) - sideA.p50(of(sideA))).toFixed(3)} ms |`,
      );
  }
}
