import { errorFromBody } from "../core/errors/index.ts";
import type { CloseSessionArgs, ExecCommandArgs, PtyCloseResult, PtyCommandResult, PtySessionInfo, WriteStdinArgs } from "../pty/index.ts";
import type { ReadFileArgs, ReadFileResult, WriteFileArgs, WriteFileResult } from "../files/index.ts";
import { HopError } from "./hopErrors.ts";
import { bearerHeader } from "./remoteAuth.ts";

/** The tool operations on a hop's host, whether through its agentd or the SSH fallback. */
export interface RemoteAgentdClient {
  readonly hop: string;
  readonly mode: "agentd" | "fallback";
  /** `privileged`: a sudo-approved call, started without no_new_privs where the remote side can tell. */
  exec(args: ExecCommandArgs, signal?: AbortSignal, privileged?: boolean): Promise<PtyCommandResult>;
  writeStdin(args: WriteStdinArgs, signal?: AbortSignal): Promise<PtyCommandResult>;
  listSessions(signal?: AbortSignal): Promise<PtySessionInfo[]>;
  closeSession(args: CloseSessionArgs, signal?: AbortSignal): Promise<PtyCloseResult>;
  readFile(args: ReadFileArgs, signal?: AbortSignal): Promise<ReadFileResult>;
  writeFile(args: WriteFileArgs, signal?: AbortSignal): Promise<WriteFileResult>;
  /** The remote agentd's health verdict and open incidents; only a hop running agentd has them. */
  overview?(signal?: AbortSignal): Promise<{ health: string | null; incidents_open: number | null; gate: string | null }>;
}

export interface HttpClientLink {
  /** The tunnel's base URL while the hop is connected; undefined while it reconnects or is closed. */
  baseUrl(): string | undefined;
  /** The remote agentd's bearer token, read from its data dir; held in memory only. */
  token(): string | undefined;
  /** Why there is no link right now (reconnecting, closed), for the error message. */
  unavailable(): HopError;
  callTimeoutMarginMs: number;
}

const DEFAULT_WAIT_MS = 10_000;

/** Calls the remote agentd's /api/pty and /api/files through the hop's SSH-forwarded tunnel. */
export class HttpRemoteAgentdClient implements RemoteAgentdClient {
  readonly mode = "agentd";

  constructor(
    readonly hop: string,
    private readonly link: HttpClientLink,
  ) {}

  exec(args: ExecCommandArgs, signal?: AbortSignal, privileged = false): Promise<PtyCommandResult> {
    // Only a sudo-approved call asks the remote agentd to start it without no_new_privs.
    return this.call("POST", privileged ? "/api/pty/privileged" : "/api/pty", args, args.yield_time_ms ?? DEFAULT_WAIT_MS, signal);
  }

  writeStdin(args: WriteStdinArgs, signal?: AbortSignal): Promise<PtyCommandResult> {
    const { session_id, ...body } = args;
    return this.call("POST", `/api/pty/${encodeURIComponent(session_id)}/stdin`, body, args.yield_time_ms ?? DEFAULT_WAIT_MS, signal);
  }

  async listSessions(signal?: AbortSignal): Promise<PtySessionInfo[]> {
    return (await this.call<{ sessions: PtySessionInfo[] }>("GET", "/api/pty", undefined, 0, signal)).sessions;
  }

  closeSession(args: CloseSessionArgs, signal?: AbortSignal): Promise<PtyCloseResult> {
    const query = args.force === undefined ? "" : `?force=${args.force}`;
    return this.call("DELETE", `/api/pty/${encodeURIComponent(args.session_id)}${query}`, undefined, 0, signal);
  }

  readFile(args: ReadFileArgs, signal?: AbortSignal): Promise<ReadFileResult> {
    return this.call("POST", "/api/files/read", args, 0, signal);
  }

  writeFile(args: WriteFileArgs, signal?: AbortSignal): Promise<WriteFileResult> {
    return this.call("POST", "/api/files/write", args, 0, signal);
  }

  async overview(signal?: AbortSignal): Promise<{ health: string | null; incidents_open: number | null; gate: string | null }> {
    const [health, incidents] = await Promise.all([
      // /health answers 503 with its document when it fails: that answer is the verdict, not an error.
      this.call<HealthDocument>("GET", "/health", undefined, 0, signal).then(
        (doc) => ({ status: doc.status ?? null, gate: gateMode(doc) }),
        (error: unknown) => {
          if ((error as HopError).details?.remote_status === 503) return { status: "fail", gate: null };
          throw error;
        },
      ),
      this.call<{ total?: number }>("GET", "/api/incidents?state=unresolved&limit=1", undefined, 0, signal),
    ]);
    return { health: health.status, gate: health.gate, incidents_open: typeof incidents.total === "number" ? incidents.total : null };
  }

  private async call<T>(method: string, path: string, body: unknown, waitMs: number, signal?: AbortSignal): Promise<T> {
    const base = this.link.baseUrl();
    const token = this.link.token();
    if (!base || !token) throw this.link.unavailable();
    const limitMs = waitMs + this.link.callTimeoutMarginMs;
    const timeout = AbortSignal.timeout(limitMs);
    let response: Response;
    try {
      response = await fetch(base + path, {
        method,
        headers: body === undefined ? bearerHeader(token) : { ...bearerHeader(token), "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      if (timeout.aborted)
        throw new HopError("hop_timeout", `Hop ${this.hop}: the remote agentd did not answer ${method} ${path} within ${limitMs} ms`);
      throw new HopError(
        "hop_disconnected",
        `Hop ${this.hop}: the connection dropped during ${method} ${path} (${(error as Error).message}). A command it started keeps running in the remote agentd; after the hop reconnects, list_sessions shows it.`,
        { cause: error },
      );
    }
    const text = await response.text().catch((error: unknown) => {
      throw new HopError("hop_disconnected", `Hop ${this.hop}: the connection dropped while reading the answer to ${method} ${path}`, {
        cause: error,
      });
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new HopError(
        "hop_remote_error",
        `Hop ${this.hop}: ${method} ${path} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
      );
    }
    if (response.status === 401) {
      throw new HopError(
        "hop_remote_error",
        `Hop ${this.hop}: the remote agentd refused the hop's token (its token file changed while it ran); reopen the hop with agentd hop`,
      );
    }
    if (!response.ok) {
      const error = (parsed as { error?: { code?: string; message?: string; details?: Record<string, unknown> } }).error;
      if (response.status === 404 && error?.code === "not_found") {
        throw new HopError("hop_remote_error", `Hop ${this.hop}: the remote agentd has no ${path} (it is an older or different build)`);
      }
      throw (
        errorFromBody(parsed, response.status, ` (on hop ${this.hop})`) ??
        new HopError("hop_remote_error", `Hop ${this.hop}: ${error?.message ?? `HTTP ${response.status}`}`, {
          details: { remote_code: error?.code, remote_status: response.status, ...error?.details },
        })
      );
    }
    return parsed as T;
  }
}

interface HealthDocument {
  status?: string;
  checks?: Record<string, Array<{ status?: string; observedValue?: unknown }>>;
}

/** How the remote agentd keeps its commands from itself (its start mode), from its /health; null from an agentd too old to say. */
function gateMode(doc: HealthDocument): string | null {
  const check = doc.checks?.["security:privilege_gate"]?.[0];
  if (!check || typeof check.observedValue !== "string") return null;
  return check.status === "warn" ? `${check.observedValue} (warn)` : check.observedValue;
}
