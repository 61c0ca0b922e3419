/**
 * Where the floor of a gateway like agentd lies: the bare relay, then a gateway that adds agentd's
 * unavoidable duties one at a time (bench/support/floorGateway.ts: parse the body, deadlines and
 * client aborts, a log line read by a parent process, a scanned stream), the same duties on an
 * upstream client of its own instead of fetch, then agentd, all against the same upstream and load
 * client with rounds interleaved. The `scan` rung is what a gateway with these duties built on Bun's
 * fetch pays; the `client` rung shows how much of that is fetch reading bodies into JS. What agentd
 * costs over them is its own.
 *
 *   node_modules/.bin/bun bench/floor.ts [--pin 0] [--rounds 9]
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureBinary } from "../tests/support/binary.ts";
import { BenchRig, waitForFile } from "./support/benchRig.ts";
import { measureRows, pairedRatio, ROWS, Side } from "./support/loadSides.ts";

const RUNGS = ["parse", "deadline", "log", "scan", "client"] as const;
/** The rungs from `log` on run as a parent (the log's reader) and the gateway it started. */
const WITH_PARENT: ReadonlySet<string> = new Set(["log", "scan", "client"]);
const GATEWAY = join(import.meta.dir, "support", "floorGateway.ts");

const { values } = parseArgs({ options: { pin: { type: "string" }, rounds: { type: "string", default: "9" } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write(`bench/floor: Cannot run ${values.rounds} rounds: give a whole number ≥ 1\n`);
  process.exit(2);
}

await ensureBinary();
const rig = await BenchRig.start();
try {
  const gateways: Array<{ name: string; url: string; pids: () => number[] }> = [];
  for (const rung of RUNGS) {
    const portFile = join(rig.dir, `floor-${rung}`);
    const child = Bun.spawn([process.execPath, GATEWAY, rung, portFile, rig.upstreamUrl], {
      stdout: "ignore",
      stderr: "inherit",
      env: rig.env,
    });
    rig.children.push(child);
    const port = await waitForFile(portFile, child);
    const pids = WITH_PARENT.has(rung) ? [child.pid, Number(await waitForFile(`${portFile}.child`, child))] : [child.pid];
    rig.track(() => pids);
    gateways.push({ name: rung, url: `http://127.0.0.1:${port}/v1/chat/completions`, pids: () => pids });
  }
  const agentd = await rig.startAgentd("agentd");
  const everyone = () => [
    new Side(rig.relayUrl, () => [rig.relayPid]),
    ...gateways.map((gateway) => new Side(gateway.url, gateway.pids)),
    new Side(agentd.url, agentd.pids),
  ];
  // The table reads the rows in this order: c=1 for latency, the stream for TTFB.
  const rows = [ROWS.c32, ROWS.c1, ROWS.stream, ROWS.spaced];
  let measured: Side[][] = [];
  // Not process.exit: the finally below must still end every process the bench started.
  const ran = await rig.placed(values.pin, async () => {
    measured = await measureRows(everyone, rows, rounds);
  });
  if (ran)
    printTable(
      measured,
      rows.map((row) => row.label),
    );
  else process.exitCode = 1;
} finally {
  await rig.stop();
}

function printTable(measured: Side[][], labels: string[]): void {
  const names = ["bare relay", ...RUNGS.map((rung) => `+ ${rung}`), "agentd"];
  console.log(
    `\nCPU per request (µs, all of a side's processes, and split: parent + child) and ratio to the bare relay; ${rounds} rounds a row, ${values.pin === undefined ? "placed by the scheduler" : `all on CPU ${values.pin}`}\n`,
  );
  console.log(`| side | ${labels.map((label) => `${label} µs | ×relay`).join(" | ")} | p50 c=1 | TTFB p50 |`);
  console.log(`| --- | ${labels.map(() => "---: | ---:").join(" | ")} | ---: | ---: |`);
  // Latency over the relay's, in ms: c=1's whole answer, the stream's first bytes.
  const over = (sides: Side[], i: number, of: (side: Side) => number[]) => {
    const ms = sides[i]!.p50(of(sides[i]!)) - sides[0]!.p50(of(sides[0]!));
    return `${ms >= 0 ? "+" : ""}${ms.toFixed(3)} ms`;
  };
  names.forEach((name, i) => {
    const cells = measured.map(
      (sides) => `${sides[i]!.cpuPerRequestUs().toFixed(1)} (${sides[i]!.cpuSplitUs()}) | ×${pairedRatio(sides[i]!, sides[0]!).toFixed(2)}`,
    );
    console.log(
      `| ${name} | ${cells.join(" | ")} | ${over(measured[1]!, i, (side) => side.ms)} | ${over(measured[2]!, i, (side) => side.ttfb)} |`,
    );
  });
}
