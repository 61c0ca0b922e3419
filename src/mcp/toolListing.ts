import type { Tool, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { LOCAL_TARGET, type ToolDefinition } from "../agent/index.ts";

/** Tools the agent has that MCP does not serve: `target` on each call replaces switching hosts. */
const NOT_SERVED = new Set(["hop"]);

/** What each tool does to the host, for clients that show or gate tools by their hints. */
const ANNOTATIONS: Record<string, ToolAnnotations> = {
  exec_command: { title: "Run a command", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  write_stdin: { title: "Type into a terminal", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  list_sessions: { title: "List terminals", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  close_session: { title: "Close a terminal", readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  read_file: { title: "Read a file", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  write_file: { title: "Write a file", readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  list_incidents: { title: "List incidents", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  get_incident: { title: "Show an incident", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  service_status: { title: "Service status", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  restart_service: { title: "Restart a service", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

export const GET_CALL_RESULT = "get_call_result";

export const getCallResultArgs = z.strictObject({
  call_id: z.string().min(1).describe("The call id agentd gave (mcp_…), in the progress messages and results of a call"),
  wait_s: z.number().int().min(0).max(300).optional().describe("Wait up to this many seconds for a call still pending or running"),
});

/** The agent's tools MCP serves, by name. */
export function servedTools(tools: readonly ToolDefinition[]): Map<string, ToolDefinition> {
  return new Map(tools.filter((tool) => !NOT_SERVED.has(tool.name)).map((tool) => [tool.name, tool]));
}

function inputSchema(schema: z.ZodType): Tool["inputSchema"] {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return json as Tool["inputSchema"];
}

/** The tools as MCP lists them: JSON schema (host-bound tools take `target`), scope-derived hints. */
export function toolListing(tools: ReadonlyMap<string, ToolDefinition>): Tool[] {
  const listed: Tool[] = [...tools.values()].map((tool) => {
    const schema = inputSchema(tool.parameters);
    if (tool.hostBound)
      schema.properties = {
        ...schema.properties,
        target: {
          type: "string",
          description: `Where to run: "${LOCAL_TARGET}" (default) or the name of a connected hop (see agentd hops)`,
        },
      };
    return {
      name: tool.name,
      description: `${tool.description} (approval scope: ${tool.scope})`,
      inputSchema: schema,
      annotations: ANNOTATIONS[tool.name] ?? { readOnlyHint: tool.scope === "read" },
    };
  });
  listed.push({
    name: GET_CALL_RESULT,
    description:
      "Read the result of an earlier call by its id: one that waited for approval when the client went away, or one still running.",
    inputSchema: inputSchema(getCallResultArgs),
    annotations: { title: "Result of a call", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  });
  return listed;
}
