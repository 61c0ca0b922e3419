import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// A model whose tool calls keep coming back as markup that does not parse: the proxy logs each
// answer, the watchdog opens an incident naming the model, the format and a sample, and its default
// rule fails over for that model to the other provider that serves it; the provider's other models stay.

let daemon: DaemonProcess | undefined;
const upstreams: ScriptedUpstream[] = [];

afterEach(async () => {
  await daemon?.stop();
  for (const upstream of upstreams.splice(0)) await upstream.close();
  daemon = undefined;
}, 60_000);
afterAll(removeTempDirs);

const broken = '<tool_call>{"name": "exec_command", "arguments": {"cmd": "ls -la"</tool_call>';
const tools = [
  { type: "function", function: { name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" } } } } },
];

interface Incident {
  id: number;
  fingerprint: string;
  title: string;
  action: string | null;
}

describe("unparseable tool calls, end to end against ./agentd", () => {
  test("the incident names the model, the format and a sample; that model alone fails over to the provider that also serves it", async () => {
    await ensureBinary();
    const primary = startScriptedUpstream({ models: ["qwen3-coder"], wires: ["chat"] });
    const backup = startScriptedUpstream({ models: ["qwen3-coder"], wires: ["chat"] });
    upstreams.push(primary, backup);
    primary.setDefault({ kind: "text", text: broken });
    backup.setDefault({ kind: "text", toolCalls: [{ name: "exec_command", arguments: '{"cmd": "ls -la"}' }] });
    const home = makeTempDir("agentd-wd-unparsed-");
    const dataDir = join(home, "data");
    mkdirSync(dataDir);
    daemon = await startDaemon({
      dataDir,
      config: {
        providers: [
          { name: "primary", base_url: primary.url, models: ["qwen3-coder", "llama-3"], priority: 10 },
          { name: "backup", base_url: backup.url, models: ["qwen3-coder"], priority: 1 },
        ],
        watchdog: { tick_ms: 100 },
      },
    });
    const url = daemon.url;
    const ask = async (model = "qwen3-coder") => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "list" }], tools }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { choices: { message: { content: string | null; tool_calls?: unknown[] } }[] };
      return { ...body, provider: response.headers.get("x-agentd-provider") };
    };
    const first = await ask();
    expect([first.provider, first.choices[0]!.message.content]).toEqual(["primary", broken]);
    const incident = await waitFor(
      "the rule's switch on the model's incident",
      async () => {
        await ask();
        return (await api<{ incidents: Incident[] }>(url, "/api/incidents?state=unresolved")).incidents.find(
          (i) => i.fingerprint === "model:qwen3-coder@primary" && i.action === "switch_provider",
        );
      },
      { timeoutMs: 90_000, intervalMs: 50 },
    );
    expect(incident.title).toBe("A model's tool calls in text do not parse — model:qwen3-coder@primary");
    const { timeline } = await api<{ timeline: Array<{ kind: string; fields: Record<string, unknown> }> }>(
      url,
      `/api/incidents/${incident.id}`,
    );
    const signal = timeline.find((e) => e.kind === "signal")!;
    expect(signal.fields).toMatchObject({ signal: "proxy.tool_calls_unparsed", provider: "primary", model: "qwen3-coder" });
    const line = JSON.parse(String(signal.fields.line)) as Record<string, unknown>;
    expect([line.format, line.sample]).toEqual(["hermes", broken]);
    await daemon.waitForLine(
      (r) => r.event === "proxy.admin" && r.action === "model_switch" && r.provider === "primary" && r.model === "qwen3-coder",
    );
    const after = await ask();
    expect([after.provider, after.choices[0]!.message.tool_calls?.length]).toEqual(["backup", 1]);
    // The provider's other model is still answered there: its breaker was never opened.
    expect((await ask("llama-3")).provider).toBe("primary");
    expect(daemon.lines.filter((r) => r.event === "proxy.admin" && r.action === "breaker_open")).toEqual([]);
    const status = await api<{ providers: { rows: Array<{ name: string; tool_calls: Array<Record<string, unknown>> }> } }>(
      url,
      "/status?format=json",
    );
    const rows = Object.fromEntries(status.providers.rows.map((row) => [row.name, row.tool_calls]));
    expect(rows.primary?.map((row) => [row.model, row.text_calls, row.unparsed_rate, row.last_unparsed_format])).toEqual([
      ["qwen3-coder", 0, 1, "hermes"],
      ["llama-3", 0, 1, "hermes"],
    ]);
    expect(rows.primary![0]!.answers).toBeGreaterThanOrEqual(5);
    // The backup's calls come structured: no text calls, nothing unparseable.
    expect(rows.backup?.map((row) => [row.model, row.text_calls, row.unparsed])).toEqual([["qwen3-coder", 0, 0]]);
    expect(rows.backup![0]!.answers).toBeGreaterThanOrEqual(1);
  }, 180_000);
});
