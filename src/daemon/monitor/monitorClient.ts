import { randomUUID } from "node:crypto";
import { AgentdError, type ErrorCode } from "../../core/errors/index.ts";
import type { Logger } from "../../core/log/index.ts";
import { type CommandIdentity, type CommandResult, type RunCommandOptions, runInBackground } from "../../core/process/index.ts";
import type { FileAccess, ReadFileResult, WriteFileResult } from "../../files/index.ts";
import type { CommandLauncher, LaunchRequest } from "../../pty/commandLauncher.ts";
import type { ExitStatus } from "../../pty/waitStatus.ts";
import type { MonitorReply, MonitorRequest } from "./monitorProtocol.ts";
import { isPush } from "../supervisorChannel.ts";

interface Pending {
  resolve(value: unknown): void;
  reject(error: AgentdError): void;
}

/** The worker's side of the monitor channel: numbered requests over Bun's IPC, each answered once. */
export class MonitorClient {
  #next = 1;
  readonly #pending = new Map<number, Pending>();

  constructor(private readonly log: Logger) {
    // The supervisor's pushes (supervisorChannel.ts) share the channel: only replies are the client's.
    process.on("message", (message: unknown) => {
      if (!isPush(message)) this.#answer(message as MonitorReply);
    });
    // The supervisor is gone: the worker stops on its own (orphan watch); nothing it asked will be answered.
    process.on("disconnect", () => this.#failAll("the monitor's channel closed"));
  }

  request<T>(request: MonitorRequest): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (!process.send?.({ id, request })) {
        this.#pending.delete(id);
        reject(new AgentdError("monitor_unavailable", `Cannot ask agentd's monitor to ${request.op}: its channel is closed`));
      }
    });
  }

  /** The worker is done: nothing more is asked, and the channel no longer keeps the process alive. */
  close(): void {
    this.#failAll("the worker is stopping");
    process.disconnect?.();
  }

  #answer(reply: MonitorReply): void {
    const pending = this.#pending.get(reply?.id);
    if (!pending) {
      this.log.warn("monitor.reply_unexpected", { id: reply?.id ?? null });
      return;
    }
    this.#pending.delete(reply.id);
    if (reply.ok) pending.resolve(reply.value);
    else pending.reject(new AgentdError(reply.error.code as ErrorCode, reply.error.message, { details: reply.error.details }));
  }

  #failAll(why: string): void {
    for (const pending of this.#pending.values())
      pending.reject(new AgentdError("monitor_unavailable", `agentd's monitor did not answer: ${why}`));
    this.#pending.clear();
  }
}

/** Who the commands run as, said by the monitor (the worker itself cannot resolve it: it is not root). */
export async function monitorIdentity(client: MonitorClient): Promise<CommandIdentity> {
  return (await client.request<{ identity: CommandIdentity }>({ op: "hello" })).identity;
}

/** The pinned config file's text, read by the monitor (it may be readable by root only). */
export async function monitorConfigText(client: MonitorClient): Promise<string | undefined> {
  return (await client.request<{ text?: string }>({ op: "config" })).text;
}

/** Sessions' processes started, signalled and reaped by the monitor: the worker may not touch another uid's. */
export class MonitorLauncher implements CommandLauncher {
  readonly #exits = new Map<number, ExitStatus>();
  readonly #asking = new Set<number>();
  readonly #sessions = new Map<string, number>();
  #onExit: (pid: number) => void = () => undefined;

  constructor(
    private readonly client: MonitorClient,
    private readonly log: Logger,
  ) {}

  watchExits(listener: (pid: number) => void): void {
    this.#onExit = listener;
  }

  async start(request: LaunchRequest): Promise<number> {
    const { tty, ...rest } = request;
    const reply = await this.client.request<{ pid: number }>({
      op: "start",
      ...rest,
      words: [...rest.words],
      env: { ...rest.env },
      tty: tty.path,
    });
    this.#sessions.set(request.sessionId, reply.pid);
    return reply.pid;
  }

  async signalGroup(pid: number, signal: number): Promise<boolean> {
    return (await this.client.request<{ alive: boolean }>({ op: "signal", pid, signal })).alive;
  }

  /** Known once the monitor has reaped it; asking is started here and its answer announced through watchExits. */
  reap(pid: number): ExitStatus | undefined {
    const known = this.#exits.get(pid);
    if (known || this.#asking.has(pid)) return known;
    this.#asking.add(pid);
    runInBackground(
      "monitor.reap",
      async () => {
        try {
          const reply = await this.client.request<{ status?: ExitStatus }>({ op: "reap", pid });
          if (!reply.status) return;
          this.#exits.set(pid, reply.status);
          this.#onExit(pid);
        } finally {
          this.#asking.delete(pid);
        }
      },
      { pid },
      this.log,
    );
    return undefined;
  }

  async endSession(sessionId: string): Promise<void> {
    await this.client.request({ op: "end_session", sessionId });
    const pid = this.#sessions.get(sessionId);
    this.#sessions.delete(sessionId);
    // The session read its status already (PtyProcess keeps it).
    if (pid !== undefined) this.#exits.delete(pid);
  }
}

/** The file tools' reads and writes, done by the monitor as the command user could. */
export function monitorFiles(client: MonitorClient): FileAccess {
  return {
    read: (args) => client.request<ReadFileResult>({ op: "file_read", args: { ...args } }),
    write: (args) => client.request<WriteFileResult>({ op: "file_write", args: { ...args } }),
  };
}

/** Confined commands (a service's status command) run by the monitor as the command user. */
export function monitorRunner(client: MonitorClient, log: Logger): (options: RunCommandOptions) => Promise<CommandResult> {
  return async (options) => {
    const runId = randomUUID();
    const cancel = () => runInBackground("monitor.cancel_run", () => client.request({ op: "cancel_run", runId }), { run_id: runId }, log);
    options.signal?.addEventListener("abort", cancel, { once: true });
    try {
      return await client.request<CommandResult>({
        op: "run",
        runId,
        argv: options.argv,
        timeoutMs: options.timeoutMs,
        ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }),
      });
    } finally {
      options.signal?.removeEventListener("abort", cancel);
    }
  };
}
