import { randomBytes } from "node:crypto";
import type { Client, SFTPWrapper } from "ssh2";
import { AgentdError } from "../core/errors/index.ts";
import {
  renderOutput,
  type CloseSessionArgs,
  type ExecCommandArgs,
  type PtyCloseResult,
  type PtyCommandResult,
  type PtySessionInfo,
  type WriteStdinArgs,
} from "../pty/index.ts";
import { FallbackSession } from "./fallbackSession.ts";
import {
  DEFAULT_READ_BYTES,
  chooseEncoding,
  decodeContent,
  encodeContent,
  type ReadFileArgs,
  type ReadFileResult,
  type WriteFileArgs,
  type WriteFileResult,
} from "../files/index.ts";
import type { HopError } from "./hopErrors.ts";
import type { RemoteAgentdClient } from "./remoteAgentdClient.ts";
import { shellQuote } from "./shellQuote.ts";
import { keepErrorListener } from "./sshErrors.ts";

export interface FallbackLink {
  /** The SSH connection while the hop is up. */
  ssh(): Client | undefined;
  unavailable(): HopError;
  /** The remote $HOME, for relative file paths. */
  home: string;
}

const EXEC_WAIT = { defaultMs: 10_000, minMs: 250, maxMs: 30_000 };
const STDIN_WAIT = { defaultMs: 250, minMs: 50, maxMs: 30_000 };
const MAX_SESSIONS = 32;
const NOTE = "fallback mode: this host cannot run agentd, so the command runs in an SSH exec channel; it ends if the connection drops";

function clamp(value: number | undefined, limits: typeof EXEC_WAIT): number {
  return value === undefined ? limits.defaultMs : Math.min(limits.maxMs, Math.max(limits.minMs, value));
}

/**
 * exec_command/write_stdin/list_sessions/close_session/read_file/write_file over plain SSH, for
 * hosts where the agentd binary cannot run: each command in an exec channel with a pty, files by SFTP.
 */
export class FallbackClient implements RemoteAgentdClient {
  readonly mode = "fallback";
  private readonly sessions = new Map<string, FallbackSession>();
  private counter = 0;

  constructor(
    readonly hop: string,
    private readonly link: FallbackLink,
  ) {}

  async exec(args: ExecCommandArgs, signal?: AbortSignal): Promise<PtyCommandResult> {
    const started = performance.now();
    if (this.sessions.size >= MAX_SESSIONS)
      throw new AgentdError("pty_limit_reached", `Hop ${this.hop} already has ${MAX_SESSIONS} sessions; close one first`);
    const ssh = this.ssh();
    const env = Object.entries(args.env ?? {})
      .map(([key, value]) => `export ${key}=${shellQuote(value)}; `)
      .join("");
    const body = args.shell ? `exec ${shellQuote(args.shell)} ${args.login ? "-lc" : "-c"} ${shellQuote(args.cmd)}` : args.cmd;
    const command = `${args.workdir ? `cd ${shellQuote(args.workdir)} || exit 1; ` : ""}${env}${body}`;
    const id = `f${++this.counter}`;
    // The session listens from inside the callback: the exec's reply, the output, the exit status and the
    // close can come in one read, and ssh2 emits "exit" there and then, before an await would resume.
    const session = await new Promise<FallbackSession>((resolve, reject) =>
      ssh.exec(command, { pty: { cols: args.cols ?? 80, rows: args.rows ?? 24, term: "xterm-256color" } }, (error, channel) =>
        error ? reject(this.dropped(error)) : resolve(new FallbackSession(id, args.cmd, channel)),
      ),
    );
    this.sessions.set(id, session);
    await session.waitUntil(Date.now() + clamp(args.yield_time_ms, EXEC_WAIT), false, signal);
    return { ...this.result(session, args, started), warning: NOTE };
  }

  async writeStdin(args: WriteStdinArgs, signal?: AbortSignal): Promise<PtyCommandResult> {
    const started = performance.now();
    const session = this.session(args.session_id);
    this.ssh();
    if (args.cols && args.rows) session.resize(args.cols, args.rows);
    session.write(args.chars ?? "");
    session.lastUsedAt = Date.now();
    await session.waitUntil(Date.now() + clamp(args.yield_time_ms, STDIN_WAIT), false, signal);
    return this.result(session, args, started);
  }

  async listSessions(): Promise<PtySessionInfo[]> {
    return [...this.sessions.values()].map((s) => ({
      id: s.id,
      cmd: s.cmd,
      pid: 0,
      started: s.startedAt.toISOString(),
      running: s.running,
      exit_code: s.exitCode,
      idle_s: Math.round((Date.now() - s.lastUsedAt) / 1000),
      bytes_out: s.bytesOut,
      last_output_at: s.lastOutputAt === undefined ? null : new Date(s.lastOutputAt).toISOString(),
    }));
  }

  async closeSession(args: CloseSessionArgs): Promise<PtyCloseResult> {
    const session = this.session(args.session_id);
    session.close();
    await session.waitUntil(Date.now() + 5000, false);
    this.sessions.delete(session.id);
    const rendered = renderOutput(session.take().bytes, { maxOutputTokens: 10_000, stripAnsi: false });
    return {
      session_id: session.id,
      exit_code: session.exitCode,
      signal: session.signal,
      output: rendered.output,
      truncated: rendered.truncated,
    };
  }

  async readFile(args: ReadFileArgs): Promise<ReadFileResult> {
    const path = this.absolute(args.path);
    return this.withSftp(path, async (sftp) => {
      const size = (await new Promise<import("ssh2").Stats>((resolve, reject) => sftp.stat(path, (e, s) => (e ? reject(e) : resolve(s)))))
        .size;
      const offset = Math.min(args.offset ?? 0, size);
      const length = Math.min(args.max_bytes ?? DEFAULT_READ_BYTES, size - offset);
      const handle = await new Promise<Buffer>((resolve, reject) => sftp.open(path, "r", (e, h) => (e ? reject(e) : resolve(h))));
      const buffer = Buffer.alloc(length);
      let read = 0;
      try {
        while (read < length) {
          const n = await new Promise<number>((resolve, reject) =>
            sftp.read(handle, buffer, read, length - read, offset + read, (e, got) => (e ? reject(e) : resolve(got))),
          );
          if (n === 0) break;
          read += n;
        }
      } finally {
        sftp.close(handle, () => undefined);
      }
      const bytes = buffer.subarray(0, read);
      const encoding = chooseEncoding(bytes, args.encoding);
      return { path, size, offset, bytes: read, encoding, content: encodeContent(bytes, encoding), truncated: offset + read < size };
    });
  }

  async writeFile(args: WriteFileArgs): Promise<WriteFileResult> {
    const path = this.absolute(args.path);
    const data = decodeContent(args.content, args.encoding);
    if (args.create_dirs) {
      const dir = path.slice(0, path.lastIndexOf("/")) || "/";
      await new Promise<void>((resolve, reject) =>
        this.ssh().exec(`mkdir -p ${shellQuote(dir)}`, (e, ch) => {
          if (e) return reject(this.dropped(e));
          keepErrorListener(ch, "fallback mkdir channel");
          ch.on("close", () => resolve()).resume();
        }),
      );
    }
    return this.withSftp(path, async (sftp) => {
      const stat = (p: string) =>
        new Promise<import("ssh2").Stats | undefined>((resolve) => sftp.stat(p, (e, s) => resolve(e ? undefined : s)));
      const write = (p: string, flag: string, mode: number) =>
        new Promise<void>((resolve, reject) => sftp.writeFile(p, data, { flag, mode }, (e) => (e ? reject(e) : resolve())));
      const existing = await stat(path);
      if (args.append) {
        await write(path, "a", args.mode ? parseInt(args.mode, 8) : 0o644);
      } else {
        // Like the local file API: a temp file renamed over the target, keeping the old mode.
        const mode = existing ? existing.mode & 0o7777 : args.mode ? parseInt(args.mode, 8) : 0o644;
        const temp = `${path}.agentd-${randomBytes(4).toString("hex")}`;
        await write(temp, "w", mode);
        await new Promise<void>((resolve, reject) => sftp.ext_openssh_rename(temp, path, (e) => (e ? reject(e) : resolve())));
      }
      const size = (await stat(path))?.size ?? data.length;
      return { path, bytes_written: data.length, size, created: !existing };
    });
  }

  /** Sessions live in channels of one SSH connection: when it drops, they are gone. */
  dropAllSessions(): void {
    for (const session of this.sessions.values()) session.close();
    this.sessions.clear();
  }

  private result(session: FallbackSession, args: { max_output_tokens?: number; strip_ansi?: boolean }, started: number): PtyCommandResult {
    const { bytes, dropped } = session.take();
    const rendered = renderOutput(bytes, { maxOutputTokens: args.max_output_tokens ?? 10_000, stripAnsi: args.strip_ansi ?? false });
    if (!session.running) this.sessions.delete(session.id);
    return {
      session_id: session.running ? session.id : null,
      output: rendered.output,
      running: session.running,
      exit_code: session.running ? null : session.exitCode,
      ...(session.signal && !session.running ? { signal: session.signal } : {}),
      truncated: rendered.truncated,
      original_bytes: rendered.originalBytes,
      ...(dropped ? { dropped_bytes: dropped } : {}),
      wall_ms: Math.round(performance.now() - started),
    };
  }

  private session(id: string): FallbackSession {
    const session = this.sessions.get(id);
    if (!session)
      throw new AgentdError(
        "pty_session_not_found",
        `No session ${id} on hop ${this.hop} (fallback sessions end when they exit or the connection drops)`,
      );
    return session;
  }

  private ssh(): Client {
    const ssh = this.link.ssh();
    if (!ssh) throw this.link.unavailable();
    return ssh;
  }

  private dropped(error: Error): AgentdError {
    return this.link.ssh() ? new AgentdError("hop_remote_command_failed", `Hop ${this.hop}: ${error.message}`) : this.link.unavailable();
  }

  private absolute(path: string): string {
    if (path === "~") return this.link.home;
    if (path.startsWith("~/")) return `${this.link.home}/${path.slice(2)}`;
    return path.startsWith("/") ? path : `${this.link.home}/${path}`;
  }

  private async withSftp<T>(path: string, work: (sftp: SFTPWrapper) => Promise<T>): Promise<T> {
    const ssh = this.ssh();
    const sftp = await new Promise<SFTPWrapper>((resolve, reject) => ssh.sftp((e, s) => (e ? reject(this.dropped(e)) : resolve(s))));
    keepErrorListener(sftp, "fallback sftp");
    try {
      return await work(sftp);
    } catch (error) {
      if (error instanceof AgentdError) throw error;
      const code = (error as { code?: number }).code;
      if (code === 2) throw new AgentdError("file_not_found", `${path} does not exist (on hop ${this.hop})`);
      if (code === 3) throw new AgentdError("file_permission_denied", `Permission denied: ${path} (on hop ${this.hop})`);
      throw new AgentdError("file_io_error", `Cannot access ${path} on hop ${this.hop}: ${(error as Error).message}`);
    } finally {
      sftp.end();
    }
  }
}
