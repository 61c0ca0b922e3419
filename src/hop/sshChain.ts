import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Duplex } from "node:stream";
import type { Algorithms, Client } from "ssh2";
import { loadSsh2, type Ssh2 } from "./ssh2Module.ts";
import type { Logger } from "../core/log/index.ts";
import { formatDestination, knownHostsName, type Destination } from "./destination.ts";
import { HopError } from "./hopErrors.ts";
import { keepErrorListener } from "./sshErrors.ts";
import {
  fingerprintSha256,
  hostKeyAlgorithms,
  keyTypeOfBlob,
  knownHostsLine,
  knownKeyTypes,
  parseKnownHosts,
  verifyHostKey,
} from "./knownHosts.ts";
import type { AuthPlan } from "./sshAuth.ts";

export interface ChainOptions {
  /** Jump hosts first, the target last. */
  chain: readonly Destination[];
  auth: (destination: Destination) => AuthPlan;
  knownHostsPath: string;
  /** Append the keys of hosts not in known_hosts yet (never replaces a changed one). */
  acceptNew: boolean;
  connectTimeoutMs: number;
  keepaliveIntervalMs: number;
  keepaliveCountMax: number;
  log: Logger;
}

/** A connected chain; `target` is the last host. `closed` resolves once any link drops. */
export interface SshChain {
  target: Client;
  clients: Client[];
  closed: Promise<void>;
  end(): void;
}

/**
 * The known_hosts text; none yet is an empty file. One agentd cannot read (a path under another
 * user's home: started as root, the worker runs as the service user) is refused by name, since
 * calling every host "not known" would send the operator to --accept-new, which cannot write it either.
 */
function readKnownHosts(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "";
    throw new HopError(
      "hop_host_unknown",
      `Cannot read ${path} (${code ?? (error as Error).message}) as uid ${process.getuid?.() ?? "?"}, so no host key can be checked. Set hops.known_hosts to a file this user can read and write, then agentd reload.`,
      { cause: error, details: { known_hosts: path } },
    );
  }
}

function appendKnownHost(path: string, line: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const current = readKnownHosts(path);
  appendFileSync(path, `${current && !current.endsWith("\n") ? "\n" : ""}${line}\n`, { mode: 0o600 });
}

/** Opens a direct-tcpip channel through `via` to host:port (the next SSH connection, or a tunnelled TCP connection). */
export function forwardOut(via: Client, host: string, port: number): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    try {
      via.forwardOut("127.0.0.1", 0, host, port, (error, stream) => {
        if (error) return reject(error);
        keepErrorListener(stream, "forwarded channel", { to: `${host}:${port}` });
        resolve(stream);
      });
    } catch (error) {
      reject(error);
    }
  });
}

function connectionError(destination: Destination, error: Error & { level?: string; code?: string }, plan: AuthPlan): HopError {
  const where = formatDestination(destination);
  if (error.level === "client-authentication") {
    const tried = plan.offered.length ? plan.offered.join(", ") : "no key (none of the default key files exist and no ssh-agent)";
    const skipped = plan.skipped.length ? `; skipped ${plan.skipped.join(", ")}` : "";
    return new HopError(
      "hop_auth_failed",
      `${where} refused every key offered: ${tried}${skipped}. Pass --identity FILE or add the key to its authorized_keys.`,
      { cause: error },
    );
  }
  if (error.level === "client-timeout")
    return new HopError("hop_connect_failed", `${where} did not complete the SSH handshake in time`, { cause: error });
  return new HopError("hop_connect_failed", `Cannot connect to ${where}: ${error.message}`, {
    cause: error,
    details: error.code ? { cause_code: error.code } : undefined,
  });
}

function connectOne(ssh2: Ssh2, destination: Destination, sock: Duplex | undefined, options: ChainOptions): Promise<Client> {
  const name = knownHostsName(destination.host, destination.port);
  const entries = parseKnownHosts(readKnownHosts(options.knownHostsPath));
  const types = knownKeyTypes(entries, name);
  const plan = options.auth(destination);
  let refusal: HopError | undefined;
  const hostVerifier = (key: Buffer): boolean => {
    const verdict = verifyHostKey(entries, name, key);
    const fingerprint = fingerprintSha256(key);
    const presented = `${keyTypeOfBlob(key)} key ${fingerprint}`;
    if (verdict.status === "known") return true;
    if (verdict.status === "unknown") {
      if (options.acceptNew) {
        appendKnownHost(options.knownHostsPath, knownHostsLine(name, key));
        options.log.warn("hop.host_key_added", { host: name, fingerprint, known_hosts: options.knownHostsPath });
        return true;
      }
      refusal = new HopError(
        "hop_host_unknown",
        `The host key of ${name} is not known: it presents ${presented}. Compare it with the host's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub, run on it); if it matches, hop again with --accept-new to add it to ${options.knownHostsPath}.`,
        { details: { host: name, fingerprint, key_type: keyTypeOfBlob(key), known_hosts: options.knownHostsPath } },
      );
      return false;
    }
    const line = verdict.line;
    refusal = new HopError(
      "hop_host_key_changed",
      `WARNING: THE HOST KEY OF ${name} HAS CHANGED. It now presents ${presented}, but ${options.knownHostsPath}:${line} ${verdict.status === "revoked" ? "marks this key as revoked" : "lists a different key"}. Someone may be intercepting this connection (man-in-the-middle), or the host was reinstalled. agentd refuses, and no option overrides this. If the change is expected, remove the old key with: ssh-keygen -R '${name}' -f ${options.knownHostsPath}`,
      { details: { host: name, fingerprint, known_hosts: options.knownHostsPath, line } },
    );
    options.log.error("hop.host_key_changed", { host: name, fingerprint, known_hosts: options.knownHostsPath, line });
    return false;
  };
  const algorithms: Algorithms | undefined = types.length
    ? { serverHostKey: hostKeyAlgorithms(types) as Algorithms["serverHostKey"] }
    : undefined;
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    let settled = false;
    // One listener for the client's whole life, attached before connect: a failed connect can emit
    // two errors (a reset socket or the ready timeout, then "Connection lost before handshake" when
    // the socket closes), and a dropped link emits more after "ready".
    client.on("error", (error: Error & { level?: string; code?: string }) => {
      if (settled) return options.log.debug("hop.ssh_error", { host: name, error });
      settled = true;
      client.destroy();
      reject(refusal ?? connectionError(destination, error, plan));
    });
    client.once("ready", () => {
      if (settled) return void client.destroy();
      settled = true;
      resolve(client);
    });
    // A server that goes away after its banner closes the socket without an error (the ready timer
    // stops with it): without this the connect would wait forever.
    client.once("close", () => {
      if (settled) return;
      settled = true;
      reject(
        refusal ?? new HopError("hop_connect_failed", `${formatDestination(destination)} closed the connection during the SSH handshake`),
      );
    });
    client.once("connect", () => options.log.debug("hop.ssh_tcp_connected", { host: name }));
    client.connect({
      host: destination.host,
      port: destination.port,
      username: destination.user,
      sock,
      authHandler: plan.methods.length ? plan.methods : ["none"],
      hostVerifier,
      algorithms,
      readyTimeout: options.connectTimeoutMs,
      keepaliveInterval: options.keepaliveIntervalMs,
      keepaliveCountMax: options.keepaliveCountMax,
    });
  });
}

/** Connects to each host in turn, each later one through a channel of the one before. */
export async function connectChain(options: ChainOptions): Promise<SshChain> {
  const ssh2 = await loadSsh2();
  const clients: Client[] = [];
  try {
    for (const destination of options.chain) {
      const previous = clients.at(-1);
      let sock: Duplex | undefined;
      if (previous) {
        try {
          sock = await forwardOut(previous, destination.host, destination.port);
        } catch (error) {
          throw new HopError(
            "hop_connect_failed",
            `The jump host ${formatDestination(options.chain[clients.length - 1]!)} cannot reach ${formatDestination(destination)}: ${(error as Error).message}`,
            { cause: error },
          );
        }
      }
      clients.push(await connectOne(ssh2, destination, sock, options));
    }
  } catch (error) {
    for (const client of clients.reverse()) client.destroy();
    throw error;
  }
  // A link that loses its carrier (a jump host's channel ends) emits "end" and may never emit "close".
  const closed = new Promise<void>((resolve) => {
    for (const client of clients) {
      client.once("close", () => resolve());
      client.once("end", () => resolve());
    }
  });
  return {
    target: clients.at(-1)!,
    clients,
    closed,
    end: () => {
      for (const client of [...clients].reverse()) client.end();
    },
  };
}
