import { resolve } from "node:path";
import { UsageError, type Command } from "../command.ts";
import { writeOwnText } from "../terminalOutput.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonError, daemonFetch, daemonTargetFrom } from "../daemonClient.ts";

// Opening a hop can include uploading ~100 MB over a slow link.
const OPEN_TIMEOUT_MS = 60 * 60 * 1000;

interface HopSummary {
  name: string;
  chain: string[];
  state: string;
  mode: string | null;
  remote_version: string | null;
  fallback_reason: string | null;
  upload: { uploaded: boolean; binary_bytes: number; wire_bytes: number } | null;
}

export const hopCommand: Command = {
  path: ["hop"],
  summary: "Open a hop: agentd copies itself to a host over SSH and runs there (or close one with --close).",
  usage:
    "agentd hop user@host[:port] [--via jump1,jump2] [--identity FILE] [--accept-new] [--name NAME] | agentd hop --close NAME [--stop-remote]",
  allowPositionals: true,
  options: {
    via: { type: "string" },
    identity: { type: "string", short: "i" },
    "accept-new": { type: "boolean" },
    name: { type: "string" },
    close: { type: "string" },
    "stop-remote": { type: "boolean" },
    json: { type: "boolean" },
    ...DAEMON_OPTIONS,
  },
  help: [
    "      --via A,B         jump hosts, in order (user@host[:port] each)",
    "  -i, --identity FILE   private key (default: ~/.ssh/id_ed25519, id_ecdsa, id_rsa, then ssh-agent)",
    "      --accept-new      add an unknown host's key to known_hosts (a changed key is always refused)",
    "      --name NAME       the hop's name (default: the host)",
    "      --close NAME      close the hop's tunnel",
    "      --stop-remote     with --close: also stop the agentd on the remote host",
    "      --json            print the hop as JSON",
    "      --url URL         agentd that owns the hop (default: the local daemon)",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values, positionals }) {
    const target = daemonTargetFrom(values);
    if (values.close) {
      if (positionals.length) throw new UsageError("--close takes only the hop's name");
      const query = values["stop-remote"] ? "?stop_remote=1" : "";
      const response = await daemonFetch(target, `/api/hops/${encodeURIComponent(values.close as string)}${query}`, {
        method: "DELETE",
        timeoutMs: 60_000,
      });
      const text = await response.text();
      if (!response.ok) return fail(daemonError(response.status, text).message);
      const body = JSON.parse(text) as { stopped_remote?: boolean; remote_agentd?: "stopped" | "running" | "none" };
      const remote = body.remote_agentd ?? (body.stopped_remote ? "stopped" : "running");
      const note = {
        stopped: "the remote agentd was stopped",
        running: "the remote agentd keeps running there with its terminals (reopen it and close with --stop-remote to stop it)",
        none: "no agentd ran there (fallback mode)",
      }[remote];
      process.stdout.write(`closed hop ${values.close}; ${note}\n`);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError("expected one destination, user@host[:port]");
    const request = {
      destination: positionals[0],
      via: values.via ? String(values.via).split(",").filter(Boolean) : undefined,
      identity: values.identity ? resolve(String(values.identity)) : undefined,
      accept_new: values["accept-new"] === true,
      name: values.name as string | undefined,
    };
    const response = await daemonFetch(target, "/api/hops", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(OPEN_TIMEOUT_MS),
    });
    if (!response.ok || !response.body) {
      return fail(daemonError(response.status, await response.text()).message);
    }
    return followProgress(response.body, values.json === true);
  },
};

function fail(message: string): number {
  process.stderr.write(`agentd hop: ${message}\n`);
  return 1;
}

async function followProgress(body: ReadableStream<Uint8Array>, json: boolean): Promise<number> {
  const { createParser } = await import("eventsource-parser");
  const { ProgressRenderer } = await import("../../hop/uploadProgress.ts");
  const renderer = new ProgressRenderer(process.stderr.isTTY === true);
  let exit = 1;
  let lastStep = "";
  const parser = createParser({
    onEvent(event) {
      const data = JSON.parse(event.data) as Record<string, unknown>;
      if (event.event === "progress") {
        if (data.step === "upload" && typeof data.bytes === "number" && typeof data.total === "number") {
          writeOwnText(process.stderr, renderer.render({ bytes: data.bytes, total: data.total, elapsedMs: Number(data.elapsed_ms ?? 0) }));
        } else if (data.step !== lastStep || data.step === "start") {
          process.stderr.write(`${data.message}\n`);
        }
        lastStep = String(data.step);
      } else if (event.event === "hop") {
        const hop = data as unknown as HopSummary;
        process.stdout.write(json ? `${JSON.stringify(hop)}\n` : describe(hop));
        exit = 0;
      } else if (event.event === "error") {
        exit = fail((data.error as { message: string }).message);
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) parser.feed(decoder.decode(chunk, { stream: true }));
  return exit;
}

function describe(hop: HopSummary): string {
  const upload = hop.upload?.uploaded
    ? `uploaded ${hop.upload.binary_bytes} bytes (${hop.upload.wire_bytes} on the wire)`
    : "binary already installed";
  const mode = hop.mode === "fallback" ? `fallback mode (${hop.fallback_reason})` : `agentd ${hop.remote_version}, ${upload}`;
  return `hop ${hop.name} ${hop.state}: ${hop.chain.join(" -> ")}; ${mode}\n`;
}
