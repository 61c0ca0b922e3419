import { AgentdError, errorFromBody } from "../core/errors/index.ts";
import { locateDaemon } from "./daemonLocator.ts";
export { EXIT_TOKEN, EXIT_UNREACHABLE } from "./command.ts";

export interface DaemonTarget {
  url: string;
  token?: string;
  /** How the URL was found (each place looked at), said when nothing answers there. */
  tried?: string[];
  /** A config that could not be read on the way (`file:line:column: reason`). */
  configProblem?: string;
}

export class UnreachableError extends AgentdError {
  constructor(target: DaemonTarget | string, cause: unknown) {
    const { url, tried = [], configProblem } = typeof target === "string" ? { url: target } : target;
    const found = configProblem ? ` Looked for it through: ${tried.join("; ")}.` : "";
    super(
      "unreachable",
      `Cannot reach agentd at ${url}: ${String((cause as Error).message ?? cause).replace(/[.?!\s]+$/, "")}. Is it running? Start it with 'agentd serve', or name another with --url, --data-dir, AGENTD_URL or AGENTD_DATA_DIR.${found}`,
      { cause },
    );
  }
}

/** The daemon asks for a token (token mode) and none was sent, or the one sent is not its token. */
export class TokenRejectedError extends AgentdError {
  constructor(url: string, sent: boolean) {
    super(
      "token_rejected",
      sent
        ? `agentd at ${url} rejected the token: pass the one in its <data_dir>/token with --token or AGENTD_TOKEN`
        : `agentd at ${url} requires a token: pass the one in its <data_dir>/token with --token or AGENTD_TOKEN`,
    );
  }
}

/** --url, AGENTD_URL, the local daemon's ready file (a broken config never stands in the way), else the default port on loopback. */
export function resolveDaemonTarget(options: { url?: string; token?: string; configPath?: string; dataDir?: string }): DaemonTarget {
  return locateDaemon(options);
}

export async function daemonFetch(target: DaemonTarget, path: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (target.token && !headers.has("authorization")) headers.set("authorization", `Bearer ${target.token}`);
  let response: Response;
  try {
    response = await fetch(target.url + path, { ...init, headers, signal: init.signal ?? AbortSignal.timeout(init.timeoutMs ?? 5000) });
  } catch (error) {
    throw new UnreachableError(target, error);
  }
  if (response.status === 401) {
    await response.body?.cancel();
    throw new TokenRejectedError(target.url, Boolean(headers.get("authorization")));
  }
  return response;
}

/**
 * Calls the daemon and reads a JSON answer; a non-2xx answer becomes an AgentdError carrying the
 * daemon's error code and message (or the status and the start of a body that is not JSON).
 */
export async function daemonJson<T>(target: DaemonTarget, path: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<T> {
  const response = await daemonFetch(target, path, init);
  const text = await response.text();
  const body = parseJson(text);
  if (!response.ok || body === undefined) throw daemonError(response.status, text, `${target.url}${path}`);
  return body as T;
}

/**
 * The one reading of a daemon's error answer: its code, message and param when this build knows
 * the code; else `http_error` with the answer's status and its message (or the start of its body).
 */
export function daemonError(status: number, text: string, where = "agentd"): AgentdError {
  const parsed = parseJson(text);
  const known = errorFromBody(parsed, status);
  if (known) return known;
  const error = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const message =
    typeof error?.message === "string" ? error.message : `${where} answered HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ""}`;
  return new AgentdError("http_error", message, { status, ...(typeof error?.code === "string" ? { details: { code: error.code } } : {}) });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The options of every command that talks to a daemon (--url, --token, and where to find the local one). */
export const DAEMON_OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  config: { type: "string", short: "c" },
  "data-dir": { type: "string" },
} as const;

export function daemonTargetFrom(values: Record<string, string | boolean | undefined>): DaemonTarget {
  const text = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  return resolveDaemonTarget({ url: text("url"), token: text("token"), configPath: text("config"), dataDir: text("data-dir") });
}

/** Help lines for DAEMON_OPTIONS but --url, whose meaning each command words for itself. */
export const DAEMON_LOCATION_HELP = [
  "      --token TOKEN     bearer token (default: AGENTD_TOKEN or <data_dir>/token)",
  "  -c, --config FILE     config file, to find the local daemon",
  "      --data-dir DIR    data directory, to find the local daemon's ready.json and token",
];
