import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
// The sidecar reader alone: the agent's index.ts would load the whole agent (and the openai SDK) into a client command.
import { parseSidecar, readableSidecar } from "../../agent/sidecarRecord.ts";
import { loadConfig, resolveDataDir } from "../../core/config/index.ts";
import { UsageError, type Command } from "../command.ts";
import { daemonError, daemonFetch, daemonTargetFrom } from "../daemonClient.ts";

/** The local sidecar files of a session, oldest rotation first; empty when this host has none. */
function localSidecar(dataDir: string, sessionId: string): string | undefined {
  const path = join(dataDir, "debug", `session_${sessionId}.debug.jsonl`);
  const rotated = Array.from({ length: 20 }, (_, i) => `${path}.${20 - i}`).filter((file) => existsSync(file));
  const files = existsSync(path) ? [...rotated, path] : rotated;
  return files.length ? files.map((file) => readFileSync(file, "utf8")).join("") : undefined;
}

export const debugCommand: Command = {
  path: ["debug"],
  summary: "Print a session's debug sidecar: model requests and responses, tool calls, approvals, errors.",
  usage: "agentd debug <session-id> [--json] [--url URL]",
  allowPositionals: true,
  options: {
    url: { type: "string" },
    token: { type: "string" },
    json: { type: "boolean" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
  },
  help: [
    "      --json            print one JSON record a line instead of the readable rendering",
    "      --url URL         read it from that agentd instead of the local data dir",
    "      --data-dir DIR    data dir to read from (default: the config's, or ./.agentd)",
  ],
  async run({ values, positionals }) {
    const sessionId = positionals[0];
    if (positionals.length !== 1 || !sessionId) throw new UsageError("expected one session id (see GET /api/sessions)");
    let text: string | undefined;
    if (!values.url) {
      const { config } = loadConfig({ explicitPath: values.config as string });
      text = localSidecar(resolveDataDir({ flag: values["data-dir"] as string, config }), sessionId);
    }
    if (text === undefined) {
      const target = daemonTargetFrom(values);
      const response = await daemonFetch(target, `/api/sessions/${encodeURIComponent(sessionId)}/debug`, { timeoutMs: 30_000 });
      text = await response.text();
      if (!response.ok) throw daemonError(response.status, text);
    }
    if (values.json) for (const record of parseSidecar(text)) process.stdout.write(`${JSON.stringify(record)}\n`);
    else process.stdout.write(readableSidecar(text));
    return 0;
  },
};
