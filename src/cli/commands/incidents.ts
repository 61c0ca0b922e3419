import { describeRequestStatus, type ActionDecision, type ActionRequest, type Incident, type IncidentEvent } from "../../watchdog/index.ts";
import { userInfo } from "node:os";
import { UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonJson, daemonTargetFrom } from "../daemonClient.ts";

const STATES = ["open", "acknowledged", "resolved", "unresolved", "all"];
const VERBS = ["list", "show", "ack", "resolve", "approve", "deny"];

interface Backend {
  list(state: string, limit: number): Promise<Incident[]>;
  show(id: number): Promise<{ incident: Incident; timeline: IncidentEvent[] }>;
  setState(id: number, state: "acknowledged" | "resolved"): Promise<Incident>;
  /** Allows or denies the command waiting for approval on the incident (exactly once). */
  decide(id: number, decision: ActionDecision): Promise<ActionRequest>;
}

/** The daemon's API: the store is the daemon's alone, so the CLI never opens (or creates) one. */
function openBackend(values: Record<string, string | boolean | undefined>): Backend {
  const target = daemonTargetFrom(values);
  const call = <T>(path: string, method = "GET", body?: unknown): Promise<T> =>
    daemonJson<T>(target, `/api/incidents${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
  return {
    list: async (state, limit) =>
      (await call<{ incidents: Incident[] }>(`?limit=${limit}${state === "all" ? "" : `&state=${state}`}`)).incidents,
    show: (id) => call(`/${id}`),
    setState: async (id, state) =>
      (await call<{ incident: Incident }>(`/${id}/${state === "acknowledged" ? "ack" : "resolve"}?by=cli${personQuery()}`, "POST"))
        .incident,
    decide: async (id, decision) =>
      (await call<{ request: ActionRequest }>(`/${id}/action`, "POST", { decision, decided_by: "cli" })).request,
  };
}

/**
 * The person behind this CLI, sent so an ack names them: the user who ran sudo when there is one
 * (root acts for them), else the OS user. Nothing when the uid has no name.
 */
function personQuery(): string {
  let name = process.env.SUDO_USER;
  if (!name) {
    try {
      name = userInfo().username;
    } catch {
      return "";
    }
  }
  return `&user=${encodeURIComponent(name)}`;
}

function time(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19);
}

function formatList(incidents: Incident[]): string {
  if (incidents.length === 0) return "No incidents.\n";
  const rows = incidents.map((i) => [
    String(i.id),
    i.state,
    i.severity,
    time(i.last_seen),
    String(i.count),
    i.action ? `${i.action}${i.verdict ? `/${i.verdict}` : ""}` : "-",
    i.title,
  ]);
  const header = ["ID", "STATE", "SEVERITY", "LAST SEEN", "COUNT", "ACTION", "TITLE"];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  return `${[header, ...rows].map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join("  ")).join("\n")}\n`;
}

function formatShow({ incident: i, timeline }: { incident: Incident; timeline: IncidentEvent[] }): string {
  const lines = [
    `#${i.id} ${i.title}`,
    `  state ${i.state}, severity ${i.severity}, category ${i.category}`,
    `  first seen ${time(i.first_seen)}, last seen ${time(i.last_seen)}, ${i.count} signal(s)`,
    `  tier ${i.tier ?? "-"}, action ${i.action ?? "-"}, verdict ${i.verdict ?? "-"}`,
  ];
  const { output, output_at: outputAt } = i.details;
  if (typeof output === "string" && output)
    lines.push(`  latest output${typeof outputAt === "number" ? ` (${time(outputAt)})` : ""}: ${output.replace(/\r?\n/g, "\n    ")}`);
  if (typeof i.details.reason === "string") lines.push(`  reason: ${i.details.reason}`);
  if (typeof i.details.model_reason === "string") lines.push(`  model's reason: ${i.details.model_reason}`);
  const request = i.action_request;
  if (request)
    lines.push(
      `  command ${request.command} (${request.status}): ${describeRequestStatus(request)}${request.status === "pending" ? ` — agentd incidents approve ${i.id} | deny ${i.id}` : ""}`,
    );
  if (timeline.length) lines.push("  timeline:", ...timeline.map((e) => `    ${time(e.ts)}  ${e.kind.padEnd(13)} ${e.message}`));
  return `${lines.join("\n")}\n`;
}

export const incidentsCommand: Command = {
  path: ["incidents"],
  summary: "List, show, acknowledge or resolve the watchdog's incidents; approve or deny a command it waits to run.",
  usage: "agentd incidents [list|show ID|ack ID|resolve ID|approve ID|deny ID] [--state S] [--limit N] [--json] [--url URL]",
  allowPositionals: true,
  options: {
    state: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
    ...DAEMON_OPTIONS,
  },
  help: [
    `      --state S         ${STATES.join(" | ")} (default unresolved)`,
    "      --limit N         at most N incidents (default 50)",
    "      --json            print JSON",
    "      --url URL         agentd to ask (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values, positionals }) {
    const [verb = "list", idText, ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (!VERBS.includes(verb)) throw new UsageError(`unknown subcommand "${verb}": expected one of ${VERBS.join(", ")}`);
    const state = (values.state as string | undefined) ?? "unresolved";
    if (!STATES.includes(state)) throw new UsageError(`Cannot use "${state}" as --state: expected one of ${STATES.join(", ")}`);
    const limit = values.limit === undefined ? 50 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new UsageError(`Cannot use "${values.limit}" as --limit: expected an integer from 1 to 1000`);
    let id = 0;
    if (verb !== "list") {
      id = Number(idText);
      if (!idText || !Number.isInteger(id) || id <= 0) throw new UsageError(`${verb} needs an incident id (a positive integer)`);
    }
    const backend = openBackend(values);
    {
      const print = (value: unknown, text: string) => process.stdout.write(values.json ? `${JSON.stringify(value, null, 2)}\n` : text);
      if (verb === "list") {
        const incidents = await backend.list(state, limit);
        print(incidents, formatList(incidents));
      } else if (verb === "show") {
        const shown = await backend.show(id);
        print(shown, formatShow(shown));
      } else if (verb === "approve" || verb === "deny") {
        const request = await backend.decide(id, verb === "approve" ? "allow" : "deny");
        print(request, `#${id} run_command ${request.command}: ${describeRequestStatus(request)}\n`);
      } else {
        const incident = await backend.setState(id, verb === "ack" ? "acknowledged" : "resolved");
        print(incident, `#${incident.id} ${incident.state}: ${incident.title}\n`);
      }
      return 0;
    }
  },
};
