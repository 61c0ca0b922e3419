import { afterEach, describe, expect, test } from "bun:test";
import { BUILTIN_SIGNATURES } from "../../src/watchdog/checks/signatureCatalog.ts";
import { SignatureMatcher } from "../../src/watchdog/checks/signatureMatcher.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { createHarness, logLine, startAdminRecorder, type Harness } from "./watchdogHarness.ts";

// A model whose tool calls keep reaching the client as text: one incident per model and provider,
// naming the format and a sample; the default rule fails over when another provider serves the model.

let harness: Harness | undefined;
let admin: ReturnType<typeof startAdminRecorder> | undefined;
afterEach(() => {
  harness?.close();
  admin?.stop();
  harness = admin = undefined;
});

const sample = '<tool_call>{"name": "exec_command", "arguments": </tool_call>';
const unparsed = (model = "qwen3-coder", provider = "primary") =>
  logLine("proxy.tool_calls_unparsed", { provider, model, format: "hermes", blocks: 1, sample });
const primary = { name: "primary", models: ["*"], aliases: {} };

describe("the proxy.tool_calls_unparsed signature", () => {
  test("matches the proxy's event on a component of the model and provider", () => {
    const signal = new SignatureMatcher(BUILTIN_SIGNATURES).match(unparsed(), 1);
    expect(signal).toMatchObject({
      id: "proxy.tool_calls_unparsed",
      category: "format",
      component: "model:qwen3-coder@primary",
      fields: { provider: "primary", model: "qwen3-coder" },
    });
    expect(signal?.line).toContain('"format":"hermes"');
  });
});

describe("switch-on-unparsed-tool-calls (the default rule)", () => {
  test("four failures open the incident and wait; the fifth switches the provider away for that model only", async () => {
    admin = startAdminRecorder();
    harness = createHarness({}, admin.url, { providers: [primary, { name: "backup", models: ["qwen3-*"], aliases: {} }] });
    for (let i = 0; i < 4; i++) await harness.watchdog.ingestLine(unparsed());
    const store = new IncidentStore(harness.db);
    const [incident] = store.list();
    expect(incident).toMatchObject({ title: "A model's tool calls in text do not parse — model:qwen3-coder@primary", action: null });
    expect(admin.calls).toEqual([]);
    await harness.watchdog.ingestLine(unparsed());
    expect(admin.calls.map((c) => [c.path, c.body.duration_ms])).toEqual([
      ["/api/admin/proxy/providers/primary/models/qwen3-coder/switch", 300_000],
    ]);
    expect(admin.breakerState()).toBe("ok");
    expect(store.list()[0]).toMatchObject({ id: incident!.id, tier: 1, action: "switch_provider" });
    const signal = store.timeline(incident!.id).find((e) => e.kind === "signal");
    expect(signal?.fields).toMatchObject({ signal: "proxy.tool_calls_unparsed", provider: "primary", model: "qwen3-coder" });
    expect(String(signal?.fields.line)).toContain('"format":"hermes"');
    expect(String(signal?.fields.line)).toContain("exec_command");
  });

  test("is skipped when no other provider serves the model, and said on the incident", async () => {
    admin = startAdminRecorder();
    harness = createHarness({}, admin.url, { providers: [primary, { name: "backup", models: ["llama-*"], aliases: {} }] });
    for (let i = 0; i < 5; i++) await harness.watchdog.ingestLine(unparsed());
    expect(admin.calls).toEqual([]);
    const store = new IncidentStore(harness.db);
    const [incident] = store.list();
    expect(incident).toMatchObject({ tier: 1, action: "switch_provider" });
    expect(store.timeline(incident!.id).find((e) => e.kind === "action_skipped")?.message).toBe(
      "switch_provider skipped: no other provider serves model qwen3-coder; there is nothing to fail over to",
    );
  });

  test("failures of different models do not add up: each model is its own incident", async () => {
    admin = startAdminRecorder();
    harness = createHarness({}, admin.url, { providers: [primary, { name: "backup", models: ["*"], aliases: {} }] });
    for (let i = 0; i < 4; i++) {
      await harness.watchdog.ingestLine(unparsed("qwen3-coder"));
      await harness.watchdog.ingestLine(unparsed("glm-4.5"));
    }
    expect(admin.calls).toEqual([]);
    expect(
      new IncidentStore(harness.db)
        .list()
        .map((i) => i.title)
        .sort(),
    ).toEqual([
      "A model's tool calls in text do not parse — model:glm-4.5@primary",
      "A model's tool calls in text do not parse — model:qwen3-coder@primary",
    ]);
  });
});
