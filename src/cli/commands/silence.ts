import type { Silence } from "../../watchdog/incidents/silenceStore.ts";
import { parseDuration, UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonJson, daemonTargetFrom } from "../daemonClient.ts";

const JSON_HEADERS = { "content-type": "application/json" };

function describe(s: Silence): string {
  return `#${s.id} ${s.target} until ${new Date(s.until).toISOString()}${s.reason ? ` — ${s.reason}` : ""}`;
}

export const silenceCommand: Command = {
  path: ["silence"],
  summary: "Mute the watchdog's alerts and actions for a check, signal or component (maintenance).",
  usage: "agentd silence <check|signal|component> <duration> [--reason TEXT] | --list | --clear ID",
  allowPositionals: true,
  options: {
    reason: { type: "string" },
    list: { type: "boolean" },
    clear: { type: "string" },
    json: { type: "boolean" },
    ...DAEMON_OPTIONS,
  },
  help: [
    "      --reason TEXT     why (shown on incidents while silenced)",
    "      --list            show active silences",
    "      --clear ID        end a silence early",
    "      --json            print JSON",
    "      --url URL         agentd to ask (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    ...DAEMON_LOCATION_HELP,
    "",
    "The daemon refuses a name it does not know (no such check, signal or component) and suggests the nearest.",
    "A silenced signal is still recorded on its incident; only alerts and actions wait.",
  ],
  async run({ values, positionals }) {
    const listing = values.list === true;
    const clearing = values.clear !== undefined;
    if (!listing && !clearing && positionals.length !== 2)
      throw new UsageError("expected a target and a duration, e.g. 'agentd silence db 30m'");
    if ((listing || clearing) && positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const durationMs = !listing && !clearing ? parseDuration(positionals[1]!) : 0;
    if (!listing && !clearing && !(durationMs > 0))
      throw new UsageError(`Cannot use "${positionals[1]}" as a duration: a silence needs a positive duration (e.g. 30m)`);
    const clearId = Number(values.clear);
    if (clearing && (!Number.isInteger(clearId) || clearId <= 0))
      throw new UsageError(`Cannot use "${values.clear}" as --clear: expected a silence id`);
    const target = daemonTargetFrom(values);
    if (listing) {
      const { silences } = await daemonJson<{ silences: Silence[] }>(target, "/api/incidents/silences");
      if (values.json) process.stdout.write(`${JSON.stringify(silences, null, 2)}\n`);
      else if (silences.length === 0) process.stdout.write("No active silences.\n");
      else for (const s of silences) process.stdout.write(`${describe(s)}\n`);
      return 0;
    }
    if (clearing) {
      await daemonJson(target, `/api/incidents/silences/${clearId}`, { method: "DELETE" });
      process.stdout.write(`Silence #${clearId} removed.\n`);
      return 0;
    }
    const { silence } = await daemonJson<{ silence: Silence }>(target, "/api/incidents/silences", {
      method: "POST",
      headers: JSON_HEADERS,
      body: JSON.stringify({ target: positionals[0], duration_ms: durationMs, reason: values.reason }),
    });
    if (values.json) process.stdout.write(`${JSON.stringify(silence, null, 2)}\n`);
    else process.stdout.write(`Silenced ${silence.target} until ${new Date(silence.until).toISOString()} (#${silence.id}).\n`);
    return 0;
  },
};
