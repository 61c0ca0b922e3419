import { join } from "node:path";
import { loadConfig, resolveDataDir } from "../../core/config/index.ts";
import { allMigrations } from "../../daemon/allMigrations.ts";
import { openStore } from "../../core/store/index.ts";
import { SilenceStore } from "../../watchdog/index.ts";
import { parseDuration, UsageError, type Command } from "../command.ts";

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
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
  },
  help: [
    "      --reason TEXT     why (shown on incidents while silenced)",
    "      --list            show active silences",
    "      --clear ID        end a silence early",
    "      --json            print JSON",
    "  -c, --config FILE     config file (for the data directory)",
    "      --data-dir DIR    data directory holding agentd.db",
    "",
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
    const { config } = loadConfig({ explicitPath: values.config as string | undefined });
    const dataDir = resolveDataDir({ flag: values["data-dir"] as string | undefined, config });
    const db = openStore({ path: join(dataDir, "agentd.db"), migrations: allMigrations });
    try {
      const silences = new SilenceStore(db);
      if (listing) {
        const active = silences.active();
        if (values.json) process.stdout.write(`${JSON.stringify(active, null, 2)}\n`);
        else if (active.length === 0) process.stdout.write("No active silences.\n");
        else
          for (const s of active)
            process.stdout.write(`#${s.id} ${s.target} until ${new Date(s.until).toISOString()}${s.reason ? ` — ${s.reason}` : ""}\n`);
        return 0;
      }
      if (clearing) {
        silences.remove(clearId);
        process.stdout.write(`Silence #${clearId} removed.\n`);
        return 0;
      }
      const silence = silences.add(positionals[0]!, durationMs, values.reason as string | undefined);
      if (values.json) process.stdout.write(`${JSON.stringify(silence, null, 2)}\n`);
      else process.stdout.write(`Silenced ${silence.target} until ${new Date(silence.until).toISOString()} (#${silence.id}).\n`);
      return 0;
    } finally {
      db.close();
    }
  },
};
