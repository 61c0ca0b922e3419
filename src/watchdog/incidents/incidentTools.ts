import { z } from "zod";
import { defineTool, ToolError, type ToolDefinition } from "../../core/tools/toolDefinition.ts";
import { IncidentNotFoundError, type IncidentStore } from "./incidentStore.ts";

const listParameters = z.strictObject({
  state: z
    .enum(["open", "acknowledged", "resolved", "unresolved"])
    .default("unresolved")
    .describe("Which incidents; unresolved = open or acknowledged"),
  limit: z.number().int().min(1).max(200).default(20),
});

const getParameters = z.strictObject({ id: z.number().int().min(1) });

export function createIncidentTools(store: IncidentStore): ToolDefinition[] {
  const list = defineTool({
    name: "list_incidents",
    description: "List incidents the watchdog recorded (newest first): title, category, severity, state, counts, tier and action taken.",
    parameters: listParameters,
    scope: "read",
    timeoutMs: 10_000,
    async execute(args) {
      const incidents = store.list({ state: args.state, limit: args.limit });
      return { total: store.count(args.state), incidents: incidents.map(({ details: _details, ...summary }) => summary) };
    },
  });
  const get = defineTool({
    name: "get_incident",
    description: "One incident with all its details.",
    parameters: getParameters,
    scope: "read",
    timeoutMs: 10_000,
    async execute(args) {
      try {
        return store.get(args.id);
      } catch (error) {
        if (error instanceof IncidentNotFoundError) throw new ToolError("incident_not_found", error.message);
        throw error;
      }
    },
  });
  return [list as ToolDefinition, get as ToolDefinition];
}
