import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { DirectCalls, ToolDefinition } from "../agent/index.ts";
import { AgentdError, errorMessage } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import { VERSION } from "../core/version.ts";
import { callToolResult } from "./callResult.ts";
import { diagnosePrompt, PROMPTS, readResource, RESOURCE_TEMPLATES, RESOURCES, type ResourceSources } from "./mcpResources.ts";
import { stopOnCancel } from "./stopOnCancel.ts";
import { GET_CALL_RESULT, getCallResultArgs, toolListing } from "./toolListing.ts";

export interface ConnectionDeps {
  calls: DirectCalls;
  tools: ReadonlyMap<string, ToolDefinition>;
  status(): Promise<unknown>;
  logger: Logger;
}

const INSTRUCTIONS = [
  "agentd operates this host (and hosts reached over SSH hops) under its operator's approval policy.",
  "A call that needs approval waits, with progress notifications, until the operator decides; a denied call",
  'returns a tool error "denied by …". Terminal tools take an optional target: "local" or a connected hop.',
].join(" ");

/**
 * One MCP session over Streamable HTTP: an SDK server and its transport, and the agent session
 * (kind "mcp") its calls are recorded in, opened once the client says who it is.
 */
export class McpConnection {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly #server: McpServer;
  #agentSession: string | undefined;
  /** Set when the transport closes (DELETE, reap, shutdown): aborted requests then leave their calls be. */
  #disconnected = false;
  #inflight = 0;
  #lastUsed = Date.now();

  constructor(
    private readonly deps: ConnectionDeps,
    onSession: { opened(id: string): void; closed(id: string): void },
  ) {
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => onSession.opened(id),
      onsessionclosed: (id) => onSession.closed(id),
    });
    // Runs before the SDK aborts the session's requests (it chains to the handler set before connect).
    this.transport.onclose = () => {
      this.#disconnected = true;
      if (this.transport.sessionId) onSession.closed(this.transport.sessionId);
    };
    this.#server = new McpServer(
      { name: "agentd", title: "agentd", version: VERSION },
      { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: INSTRUCTIONS },
    );
    this.#server.server.oninitialized = () => this.#sessionId();
    this.#server.server.onerror = (error) =>
      deps.logger.warn("mcp.error", { mcp_session: this.transport.sessionId, error: errorMessage(error) });
    this.#handle();
  }

  connect(): Promise<void> {
    return this.#server.connect(this.transport);
  }

  get agentSession(): string | undefined {
    return this.#agentSession;
  }

  /** Idle: no request in flight and none since `ms` ago. */
  idleFor(ms: number): boolean {
    return this.#inflight === 0 && Date.now() - this.#lastUsed >= ms;
  }

  touch(): void {
    this.#lastUsed = Date.now();
  }

  async close(): Promise<void> {
    this.#disconnected = true;
    await this.#server.close();
  }

  #sessionId(): string {
    if (!this.#agentSession) {
      const client = this.#server.server.getClientVersion() ?? { name: "unknown", version: "" };
      this.#agentSession = this.deps.calls.openSession({ name: client.name, version: client.version }).id;
      this.deps.logger.info("mcp.session", {
        session: this.#agentSession,
        mcp_session: this.transport.sessionId,
        client: client.name,
        client_version: client.version,
      });
    }
    return this.#agentSession;
  }

  #handle(): void {
    const server = this.#server.server;
    const listing = toolListing(this.deps.tools);
    const sources: ResourceSources = {
      status: () => this.deps.status(),
      tool: (name) => this.deps.tools.get(name),
      call: (callId) => this.deps.calls.result(callId),
    };
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      this.#inflight++;
      this.touch();
      try {
        const name = request.params.name;
        const args = request.params.arguments ?? {};
        if (name === GET_CALL_RESULT) {
          const parsed = getCallResultArgs.safeParse(args);
          if (!parsed.success) return toolError(`Invalid arguments for ${name}: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
          return callToolResult(await this.deps.calls.result(parsed.data.call_id, (parsed.data.wait_s ?? 0) * 1000));
        }
        if (!this.deps.tools.has(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${name}`);
        const token = request.params._meta?.progressToken;
        let count = 0;
        const progress = (message: string) => {
          if (token === undefined) return;
          extra
            .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: ++count, message } })
            .catch((error: unknown) => this.deps.logger.debug("mcp.progress_failed", { error: errorMessage(error) }));
        };
        // A cancellation stops the call; a client gone away leaves it to finish (or to wait for its decision).
        const cancel = new AbortController();
        const onAbort = () => {
          if (!this.#disconnected) cancel.abort(new Error("cancelled by the MCP client"));
        };
        extra.signal.addEventListener("abort", onAbort, { once: true });
        try {
          const { answer } = this.deps.calls.call({
            sessionId: this.#sessionId(),
            tool: name,
            args,
            signal: cancel.signal,
            progress,
            wrapTarget: (target) => stopOnCancel(target, this.deps.logger),
          });
          return callToolResult(await answer);
        } finally {
          extra.signal.removeEventListener("abort", onAbort);
        }
      } catch (error) {
        if (error instanceof McpError) throw error;
        if (error instanceof AgentdError) return toolError(error.message);
        throw error;
      } finally {
        this.#inflight--;
        this.touch();
      }
    });
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const uri = request.params.uri;
      try {
        const value = await readResource(sources, uri);
        return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(value, null, 2) }] };
      } catch (error) {
        if (error instanceof AgentdError) throw new McpError(ErrorCode.InvalidParams, error.message);
        throw error;
      }
    });
    server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: PROMPTS }));
    server.setRequestHandler(GetPromptRequestSchema, async (request) => {
      if (request.params.name !== "diagnose_incident") throw new McpError(ErrorCode.InvalidParams, `Unknown prompt ${request.params.name}`);
      const id = request.params.arguments?.incident_id;
      if (!id || !/^\d+$/.test(id)) throw new McpError(ErrorCode.InvalidParams, "incident_id must be an incident number");
      try {
        const text = await diagnosePrompt(sources, id);
        return { description: `Diagnose incident ${id}`, messages: [{ role: "user", content: { type: "text", text } }] };
      } catch (error) {
        if (error instanceof AgentdError) throw new McpError(ErrorCode.InvalidParams, error.message);
        throw error;
      }
    });
  }
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
