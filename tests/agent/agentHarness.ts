import { afterEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import { createParser } from "eventsource-parser";
import {
  agentConfigSchema,
  agentMigrations,
  approvalsConfigSchema,
  createAgent,
  type Agent,
  type ToolDefinition,
} from "../../src/agent/index.ts";
import { servicesConfigSchema } from "../../src/core/config/sections/servicesConfig.ts";
import type { LogFields, Logger } from "../../src/core/log/index.ts";
import { baseMigrations, openStore, type Database } from "../../src/core/store/index.ts";
import { createErrorHandler } from "../../src/http/errorResponse.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import type { Span, SpanAttributes, Tracer } from "../../src/telemetry/index.ts";

export interface LogEntry extends LogFields {
  level: string;
  event: string;
}

/** A logger that keeps what it is told, so tests can check the tool.start / tool.end lines. */
export function recordingLogger(entries: LogEntry[] = []): Logger & { entries: LogEntry[] } {
  const write = (level: string) => (event: string, fields?: LogFields) => void entries.push({ level, event, ...fields });
  const logger = { entries, debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error"), child: () => logger };
  return logger;
}

export interface RecordedSpan {
  name: string;
  parent: RecordedSpan | string | undefined;
  attributes: SpanAttributes;
  ended: boolean;
  error?: { type: string; message?: string };
}

/** A tracer that keeps every span it starts, as the OTLP exporter would receive them. */
export function recordingTracer(): Tracer & { spans: RecordedSpan[] } {
  const spans: RecordedSpan[] = [];
  const handles = new Map<Span, RecordedSpan>();
  return {
    enabled: true,
    spans,
    startSpan(name, options = {}) {
      const parent = typeof options.parent === "string" ? options.parent : options.parent ? handles.get(options.parent) : undefined;
      const recorded: RecordedSpan = { name, parent, attributes: { ...options.attributes }, ended: false };
      const span: Span = {
        traceparent: () => undefined,
        setAttributes: (attributes) => Object.assign(recorded.attributes, attributes),
        end: (error) => {
          if (recorded.ended) throw new Error(`span ${name} ended twice`);
          recorded.ended = true;
          if (error) recorded.error = error;
        },
      };
      handles.set(span, recorded);
      spans.push(recorded);
      return span;
    },
  };
}

export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

export interface HarnessOptions {
  tools?: ToolDefinition[];
  agent?: Record<string, unknown>;
  approvals?: Record<string, unknown>;
  services?: unknown[];
  heartbeatMs?: number;
  apiKey?: string;
  /** Reuse a data dir (and its store) from an earlier harness: a worker restart. */
  dataDir?: string;
  upstream?: ScriptedUpstream;
  /** Turns, tool calls and approval waits become spans on it (recordingTracer). */
  tracer?: Tracer;
}

export interface Harness {
  url: string;
  upstream: ScriptedUpstream;
  agent: Agent;
  db: Database;
  dataDir: string;
  log: LogEntry[];
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  createSession(body?: Record<string, unknown>): Promise<string>;
  /** Posts a message and reads the turn's SSE stream to its end. */
  send(sessionId: string, content: string): Promise<SseEvent[]>;
  /** Reads GET /events?after=N to its end. */
  follow(sessionId: string, after?: number): Promise<SseEvent[]>;
  /** Stops server and agent; keeps the data dir when `keepData` (for a restart). */
  close(keepData?: boolean): Promise<void>;
}

export async function readSse(response: Response): Promise<SseEvent[]> {
  if (!response.ok) throw new Error(`SSE request failed: ${response.status} ${await response.text()}`);
  const events: SseEvent[] = [];
  const parser = createParser({ onEvent: (e) => events.push({ id: e.id, event: e.event ?? "message", data: JSON.parse(e.data) }) });
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }));
  return events;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "agentd-agent-"));
  const db = openStore({ path: join(dataDir, "agentd.db"), migrations: [...baseMigrations, ...agentMigrations] });
  const upstream = options.upstream ?? startScriptedUpstream();
  const logger = recordingLogger();
  const agent = createAgent({
    db,
    dataDir,
    config: {
      agent: agentConfigSchema().parse(options.agent ?? {}),
      approvals: approvalsConfigSchema().parse(options.approvals ?? {}),
      services: servicesConfigSchema().parse(options.services ?? []),
    },
    modelBaseUrl: upstream.url,
    modelApiKey: options.apiKey,
    tools: options.tools ?? [],
    logger,
    heartbeatMs: options.heartbeatMs,
    tracer: options.tracer,
  });
  const app = new Hono();
  app.onError(createErrorHandler(logger));
  app.route("/api", agent.routes);
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch, idleTimeout: 0 });
  const url = `http://127.0.0.1:${server.port}`;
  const api = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, ...rest } = init;
    return fetch(
      url + path,
      json === undefined
        ? rest
        : { method: "POST", ...rest, headers: { "content-type": "application/json", ...rest.headers }, body: JSON.stringify(json) },
    );
  };
  return {
    url,
    upstream,
    agent,
    db,
    dataDir,
    log: logger.entries,
    api,
    async createSession(body = {}) {
      const response = await api("/api/sessions", { json: body });
      if (response.status !== 201) throw new Error(`create session: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    },
    send: async (sessionId, content) => readSse(await api(`/api/sessions/${sessionId}/messages`, { json: { content } })),
    follow: async (sessionId, after = 0) => readSse(await api(`/api/sessions/${sessionId}/events?after=${after}`)),
    async close(keepData = false) {
      await server.stop(true);
      await agent.close();
      db.close();
      if (!options.upstream) await upstream.close();
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `harness()` for a test file: every harness it starts is closed after each test. */
export function harnessPerTest(): (options?: HarnessOptions) => Promise<Harness> {
  let open: Harness[] = [];
  afterEach(async () => {
    for (const h of open) await h.close();
    open = [];
  });
  return async (options = {}) => {
    const h = await startHarness(options);
    open.push(h);
    return h;
  };
}
