import type { Prompt, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { ToolDefinition } from "../agent/index.ts";
import { AgentdError } from "../core/errors/index.ts";

export const STATUS_URI = "agentd://status";
export const INCIDENTS_URI = "agentd://incidents";
const INCIDENT_URI = /^agentd:\/\/incidents\/(\d+)$/;
const CALL_URI = /^agentd:\/\/calls\/([\w-]+)$/;

export const RESOURCES: Resource[] = [
  {
    uri: STATUS_URI,
    name: "status",
    title: "agentd status snapshot",
    description: "Health, providers, worker, open incidents, sessions, PTYs, hops and pending approvals, as JSON",
    mimeType: "application/json",
  },
  {
    uri: INCIDENTS_URI,
    name: "incidents",
    title: "Incidents",
    description: "The watchdog's recent incidents, newest first",
    mimeType: "application/json",
  },
];

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  { uriTemplate: "agentd://incidents/{id}", name: "incident", description: "One incident with its events", mimeType: "application/json" },
  {
    uriTemplate: "agentd://calls/{call_id}",
    name: "call",
    description: "Where an MCP call stands, and its result",
    mimeType: "application/json",
  },
];

export const PROMPTS: Prompt[] = [
  {
    name: "diagnose_incident",
    title: "Diagnose incident N",
    description: "Read an incident and find its cause on the host with agentd's tools",
    arguments: [{ name: "incident_id", description: "The incident's number (see agentd incidents)", required: true }],
  },
];

export interface ResourceSources {
  status(): Promise<unknown>;
  tool(name: string): ToolDefinition | undefined;
  call(callId: string): Promise<unknown>;
}

class ResourceNotFoundError extends AgentdError {
  constructor(uri: string) {
    super("not_found", `No resource ${uri}; see resources/list and resources/templates/list`);
  }
}

async function runReadTool(sources: ResourceSources, name: string, args: unknown): Promise<unknown> {
  const tool = sources.tool(name);
  if (!tool) throw new AgentdError("not_found", `This agentd has no ${name}`);
  return tool.execute(tool.parameters.parse(args), { signal: AbortSignal.timeout(tool.timeoutMs), progress: () => {} });
}

/** Reads a resource: the status page's JSON, or the incident tools' answers (read-only, no approval). */
export async function readResource(sources: ResourceSources, uri: string): Promise<unknown> {
  if (uri === STATUS_URI) return sources.status();
  if (uri === INCIDENTS_URI) return runReadTool(sources, "list_incidents", {});
  const incident = INCIDENT_URI.exec(uri);
  if (incident) return runReadTool(sources, "get_incident", { id: Number(incident[1]) });
  const call = CALL_URI.exec(uri);
  if (call) return sources.call(call[1]!);
  throw new ResourceNotFoundError(uri);
}

/** The diagnose prompt: the incident itself, and how to go about it with the tools. */
export async function diagnosePrompt(sources: ResourceSources, incidentId: string): Promise<string> {
  const incident = await runReadTool(sources, "get_incident", { id: Number(incidentId) });
  return [
    `Diagnose agentd incident ${incidentId} on this host. Here is the incident as agentd recorded it:`,
    "",
    JSON.stringify(incident, null, 2),
    "",
    "Find the cause: read the relevant logs and configuration with read_file, check services with service_status,",
    "and run read-only commands with exec_command. Do not restart or change anything without saying why first;",
    "agentd asks its operator to approve privileged calls. End with the cause, the evidence, and a proposed fix.",
  ].join("\n");
}
