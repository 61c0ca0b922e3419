import type { Client } from "ssh2";
import { HopError } from "./hopErrors.ts";
import { runRemote } from "./remoteCommand.ts";
import { parseProbeOutput, probeScript, type RemoteFacts } from "./remoteProbe.ts";
import { resolveRemotePath } from "./shellQuote.ts";

/** Runs the probe on the remote host: what it learnt, and the remote agentd's directory (`remote_dir` below its home). */
export async function probeRemoteDir(
  ssh: Client,
  configuredDir: string,
  timeoutMs: number,
): Promise<{ facts: RemoteFacts; remoteDir: string }> {
  const probe = await runRemote(ssh, probeScript(configuredDir), timeoutMs);
  const facts = parseProbeOutput(probe.stdout);
  if (!facts.home)
    throw new HopError(
      "hop_remote_command_failed",
      `The remote probe did not report a home directory (exit ${probe.code}): ${probe.stderr.trim().slice(0, 300)}`,
    );
  return { facts, remoteDir: resolveRemotePath(configuredDir, facts.home) };
}
