// Agent loop overhead per step with a scripted upstream that answers instantly.
// Run: node_modules/.bin/bun bench/agent.ts [--steps 1000] [--rounds 3]
// The machine is shared and noisy: off and on alternate for several rounds and each reports its median run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { z } from "zod";
import {
  agentConfigSchema,
  agentMigrations,
  approvalsConfigSchema,
  createAgent,
  defineTool,
  type ToolDefinition,
} from "../src/agent/index.ts";
import type { Logger } from "../src/core/log/index.ts";
import { baseMigrations, openStore } from "../src/core/store/index.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../tests/support/scriptedUpstream.ts";

const { values } = parseArgs({ options: { steps: { type: "string", default: "1000" }, rounds: { type: "string", default: "3" } } });
const STEPS = Number(values.steps);
const ROUNDS = Number(values.rounds);
const STEPS_PER_TURN = 200;

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

interface StepTimes {
  streamEnd: number[];
  request: number[];
  toolStart: number[];
  toolEnd: number[];
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), n: sorted.length };
}

/** The run with the median wall per step. */
function medianRun(runs: AgentRun[]): AgentRun {
  return [...runs].sort((a, b) => a.wallPerStep - b.wallPerStep)[Math.floor(runs.length / 2)]!;
}

/** A fetch that notes when each model request leaves and when its stream has been read to the end. */
function observedFetch(times: StepTimes): typeof fetch {
  return (async (input: any, init?: RequestInit) => {
    times.request.push(performance.now());
    const response = await fetch(input, init);
    if (!response.body) return response;
    const noteEnd = new TransformStream<Uint8Array, Uint8Array>({ flush: () => void times.streamEnd.push(performance.now()) });
    return new Response(response.body.pipeThrough(noteEnd), { status: response.status, headers: response.headers });
  }) as typeof fetch;
}

async function readToEnd(response: Response): Promise<void> {
  for await (const _chunk of response.body!);
}

interface AgentRun {
  toTool: number[];
  toModel: number[];
  wallPerStep: number;
}

async function runAgent(upstream: ScriptedUpstream, sidecar: "off" | "info"): Promise<AgentRun> {
  // The upstream keeps every request it got; left to grow, it would make each later run pay more GC.
  upstream.requests.length = 0;
  const dataDir = mkdtempSync(join(tmpdir(), "agentd-bench-"));
  const db = openStore({ path: join(dataDir, "agentd.db"), migrations: [...baseMigrations, ...agentMigrations] });
  const times: StepTimes = { streamEnd: [], request: [], toolStart: [], toolEnd: [] };
  const tool = defineTool({
    name: "noop",
    description: "does nothing",
    parameters: z.strictObject({ n: z.number() }),
    scope: "read",
    timeoutMs: 10_000,
    async execute() {
      times.toolStart.push(performance.now());
      times.toolEnd.push(performance.now());
      return "ok";
    },
  }) as ToolDefinition;
  const agent = createAgent({
    db,
    dataDir,
    config: {
      // Every step makes the same call with the same result: the repeat stop must not end the turn first.
      agent: agentConfigSchema().parse({ max_steps: STEPS_PER_TURN, max_repeated_calls: STEPS_PER_TURN + 1, debug: { level: sidecar } }),
      approvals: approvalsConfigSchema().parse({}),
      services: [],
    },
    modelBaseUrl: upstream.url,
    modelApiKey: "sk-bench-0000000000000000",
    tools: [tool],
    logger: quiet,
    fetch: observedFetch(times),
  });
  const started = performance.now();
  const session = (await (
    await agent.routes.request("/sessions", { method: "POST", body: "{}", headers: { "content-type": "application/json" } })
  ).json()) as { id: string };
  for (let done = 0; done < STEPS; done += STEPS_PER_TURN) {
    await readToEnd(
      await agent.routes.request(`/sessions/${session.id}/messages`, {
        method: "POST",
        body: JSON.stringify({ content: "go" }),
        headers: { "content-type": "application/json" },
      }),
    );
  }
  const wall = performance.now() - started;
  await agent.close();
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
  const toTool: number[] = [];
  const toModel: number[] = [];
  // Request i's stream ends before tool i starts; tool i ends before request i+1 (within a turn).
  for (let i = 0; i < times.toolStart.length; i++) {
    toTool.push(times.toolStart[i]! - times.streamEnd[i]!);
    const next = times.request[i + 1];
    if (next !== undefined && (i + 1) % STEPS_PER_TURN !== 0) toModel.push(next - times.toolEnd[i]!);
  }
  return { toTool, toModel, wallPerStep: wall / times.toolStart.length };
}

/** The same steps driven by the bare SDK: stream, parse arguments, call the function, repeat. */
async function runBareSdk(upstream: ScriptedUpstream): Promise<number> {
  const client = new OpenAI({ apiKey: "sk-bench-0000000000000000", baseURL: upstream.url, maxRetries: 0 });
  const messages: any[] = [{ role: "user", content: "go" }];
  const started = performance.now();
  for (let step = 0; step < STEPS; step++) {
    const stream = await client.chat.completions.create({ model: "gpt-test", messages, stream: true });
    const calls: { id: string; name: string; arguments: string }[] = [];
    for await (const chunk of stream)
      for (const c of chunk.choices[0]?.delta.tool_calls ?? []) {
        let slot = calls[c.index];
        if (slot == null) {
          slot = { id: "", name: "", arguments: "" };
          calls[c.index] = slot;
        }
        slot.id ||= c.id ?? "";
        slot.name += c.function?.name ?? "";
        slot.arguments += c.function?.arguments ?? "";
      }
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
    });
    for (const call of calls) messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(JSON.parse(call.arguments)) });
    if ((step + 1) % STEPS_PER_TURN === 0) messages.splice(1);
  }
  return (performance.now() - started) / STEPS;
}

const upstream = startScriptedUpstream();
upstream.setDefault({ kind: "text", toolCalls: [{ name: "noop", arguments: '{"n":1}' }] });
const ms = (n: number) => n.toFixed(3);
try {
  await runAgent(upstream, "off"); // warm-up: JIT, SQLite page cache
  const offRuns: AgentRun[] = [];
  const onRuns: AgentRun[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so neither always runs on the warmer (or busier) side of a pair.
    for (const level of round % 2 === 0 ? (["off", "info"] as const) : (["info", "off"] as const)) {
      (level === "off" ? offRuns : onRuns).push(await runAgent(upstream, level));
    }
  }
  const off = medianRun(offRuns);
  const on = medianRun(onRuns);
  upstream.requests.length = 0;
  const bare = await runBareSdk(upstream);
  const rows: string[][] = [];
  for (const [name, run] of [
    ["sidecar off", off],
    ["sidecar on (info)", on],
  ] as const) {
    const a = stats(run.toTool);
    const b = stats(run.toModel);
    rows.push([name, ms(a.p50), ms(a.p99), ms(b.p50), ms(b.p99), ms(run.wallPerStep), String(a.n)]);
  }
  const lines = [
    `Agent per-step overhead, ${STEPS} steps (${STEPS_PER_TURN} steps a turn), scripted upstream answering instantly, times in ms`,
    `Median of ${ROUNDS} alternating rounds; wall per step, off: ${offRuns.map((r) => ms(r.wallPerStep)).join(" ")}; on: ${onRuns.map((r) => ms(r.wallPerStep)).join(" ")}`,
    "",
    "| run | stream end → tool start p50 | p99 | tool end → next request p50 | p99 | wall per step | steps |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    `| bare SDK loop (baseline) | – | – | – | – | ${ms(bare)} | ${STEPS} |`,
    "",
    `sidecar on/off: overhead p50 ${(
      (stats(on.toTool).p50 + stats(on.toModel).p50) / (stats(off.toTool).p50 + stats(off.toModel).p50)
    ).toFixed(
      2,
    )}×, wall per step ${(on.wallPerStep / off.wallPerStep).toFixed(2)}×; agent/bare SDK wall per step ${(off.wallPerStep / bare).toFixed(2)}×`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  await upstream.close();
}
