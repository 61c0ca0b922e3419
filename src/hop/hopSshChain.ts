import type { Logger } from "../core/log/index.ts";
import type { HopsConfig } from "../core/config/sections/hopConfig.ts";
import type { HopSpec } from "./hopSpec.ts";
import { connectChain, type SshChain } from "./sshChain.ts";
import { loadSsh2 } from "./ssh2Module.ts";
import { expandHome, planAuth } from "./sshAuth.ts";

/** The SSH chain to a hop's target, checked against known_hosts, with the hop's identity, the configured keys and the ssh-agent. */
export async function connectHopChain(spec: HopSpec, config: HopsConfig, log: Logger, acceptNew: boolean): Promise<SshChain> {
  const { parseKey } = await loadSsh2();
  return connectChain({
    chain: [...spec.via, spec.target],
    auth: (destination) =>
      planAuth(
        destination.user,
        {
          identity: spec.identity,
          identityFiles: config.identity_files,
          agentSocket: config.use_agent ? process.env.SSH_AUTH_SOCK : undefined,
        },
        parseKey,
      ),
    knownHostsPath: expandHome(config.known_hosts),
    acceptNew,
    connectTimeoutMs: config.connect_timeout_ms,
    keepaliveIntervalMs: config.keepalive_interval_ms,
    keepaliveCountMax: config.keepalive_count_max,
    log,
  });
}
