import type { Client } from "ssh2";
import { HopError } from "./hopErrors.ts";
import { keepErrorListener } from "./sshErrors.ts";

export interface RemoteCommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Probe and control commands print little; more than this is a runaway and is cut.
const MAX_CAPTURE = 1024 * 1024;

/** Runs a sh command on the remote host through an exec channel; bounded in time and output. */
export function runRemote(client: Client, command: string, timeoutMs: number): Promise<RemoteCommandResult> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      action();
    };
    const timer = setTimeout(
      () => finish(() => reject(new HopError("hop_timeout", `A remote command did not finish within ${timeoutMs} ms`))),
      timeoutMs,
    );
    try {
      client.exec(command, (error, channel) => {
        if (error)
          return finish(() =>
            reject(new HopError("hop_disconnected", `Cannot run a command on the remote host: ${error.message}`, { cause: error })),
          );
        keepErrorListener(channel, "exec channel");
        channel.on("error", (channelError: Error) =>
          finish(() =>
            reject(new HopError("hop_disconnected", `A remote command's channel failed: ${channelError.message}`, { cause: channelError })),
          ),
        );
        const stdout: Buffer[] = [];
        const stderr: Buffer[] = [];
        let size = 0;
        let code: number | null = null;
        const keep = (into: Buffer[]) => (chunk: Buffer) => {
          if (size >= MAX_CAPTURE) return;
          size += chunk.length;
          into.push(chunk);
        };
        channel.on("data", keep(stdout));
        channel.stderr.on("data", keep(stderr));
        channel.on("exit", (exitCode: number | null) => (code = exitCode));
        channel.on("close", () =>
          finish(() => resolve({ code, stdout: Buffer.concat(stdout).toString("utf8"), stderr: Buffer.concat(stderr).toString("utf8") })),
        );
        timer.refresh();
      });
    } catch (error) {
      finish(() =>
        reject(new HopError("hop_disconnected", `Cannot run a command on the remote host: ${(error as Error).message}`, { cause: error })),
      );
    }
  });
}

/** runRemote that fails unless the command exits 0. */
export async function runRemoteChecked(client: Client, command: string, timeoutMs: number, what: string): Promise<string> {
  const result = await runRemote(client, command, timeoutMs);
  if (result.code !== 0) {
    const detail = (result.stderr || result.stdout).trim().split("\n").slice(-3).join(" | ");
    throw new HopError(
      "hop_remote_command_failed",
      `${what} failed on the remote host (exit ${result.code ?? "none"}): ${detail || "no output"}`,
    );
  }
  return result.stdout;
}
