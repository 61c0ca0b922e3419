import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
// The sidecar reader alone: the agent's index.ts would load the whole agent (and the openai SDK) into a client command.
import { parseSidecar } from "../../agent/sidecarRecord.ts";
import { loadConfig, resolveDataDir } from "../../core/config/index.ts";
import { UsageError, type Command } from "../command.ts";
import { readableTranscript } from "../debugTranscript.ts";
import { daemonError, daemonFetch, daemonTargetFrom, UnreachableError } from "../daemonClient.ts";

/** The local sidecar files of a session, oldest rotation first; empty when this host has none. */
function localSidecar(dataDir: string, sessionId: string): string | undefined {
  const path = join(dataDir, "debug", `session_${sessionId}.debug.jsonl`);
  const rotated = Array.from({ length: 20 }, (_, i) => `${path}.${20 - i}`).filter((file) => existsSync(file));
  const files = existsSync(path) ? [...rotated, path] : rotated;
  return files.length ? files.map((file) => readFileSync(file, "utf8")).join("") : undefined;
}

function localFiles(values: Record<string, string | boolean | undefined>, sessionId: string): string | undefined {
  const { config } = loadConfig({ explicitPath: values.config as string | undefined });
  return localSidecar(resolveDataDir({ flag: values["data-dir"] as string | undefined, config }), sessionId);
}

export const debugCommand: Command = {
  path: ["debug"],
  summary: "Print a session's transcript: messages, tool calls and results, approvals, tokens and timings (--json: the raw records).",
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
    "      --json            print the raw records, one JSON object a line",
    "      --url URL         agentd to ask (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    "      --token TOKEN     bearer token (default: AGENTD_TOKEN or <data_dir>/token)",
    "  -c, --config FILE     config file, to find the local daemon",
    "      --data-dir DIR    data directory, to find the local daemon (and its files while it is down)",
  ],
  async run({ values, positionals }) {
    const sessionId = positionals[0];
    if (positionals.length !== 1 || !sessionId) throw new UsageError("expected one session id (see GET /api/sessions)");
    let text: string;
    try {
      const response = await daemonFetch(daemonTargetFrom(values), `/api/sessions/${encodeURIComponent(sessionId)}/debug`, {
        timeoutMs: 30_000,
      });
      text = await response.text();
      if (!response.ok) throw daemonError(response.status, text);
    } catch (error) {
      // With the daemon down, this host's own files still tell what happened.
      const local = error instanceof UnreachableError && !values.url ? localFiles(values, sessionId) : undefined;
      if (local === undefined) throw error;
      text = local;
    }
    if (values.json) for (const record of parseSidecar(text)) process.stdout.write(`${JSON.stringify(record)}\n`);
    else process.stdout.write(readableTranscript(parseSidecar(text)));
    return 0;
  },
};
