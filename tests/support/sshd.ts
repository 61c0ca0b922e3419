import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { join } from "node:path";
import { makeTempDir } from "./tempDir.ts";
import { GiveUp, isProcessAlive, waitFor } from "./waitFor.ts";

const SSHD = "/usr/sbin/sshd";

export interface SshdOptions {
  /** Environment the sessions see (sshd `SetEnv`), e.g. a separate HOME for the "remote" side. */
  env?: Record<string, string>;
  /** Public keys allowed in; the server's own client key is always allowed. */
  authorizedKeys?: string[];
  /** The only ciphers the server accepts (sshd `Ciphers`); OpenSSH's defaults otherwise. */
  ciphers?: string[];
}

export interface TestSshd {
  host: "127.0.0.1";
  port: number;
  user: string;
  dir: string;
  /** The temp client key pair every test connects with. */
  clientKeyPath: string;
  clientPublicKey: string;
  /** The host key line as it would appear in known_hosts: `[127.0.0.1]:port <type> <base64>`. */
  knownHostsLine: string;
  hostKeyPath: string;
  pid(): number;
  /** Kills the listener and every connection it serves (SIGKILL), like a crashed or rebooted server. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same host key. */
  restart(): Promise<void>;
  /** Replaces the host key (a "reinstalled" server) and restarts. */
  regenerateHostKey(): Promise<void>;
  /** Kills it (by pid) and removes its temp dir. */
  stop(): Promise<void>;
}

async function run(argv: string[]): Promise<string> {
  const child = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}: ${err}`);
  return out;
}

/** Installs Debian's openssh-server when it is missing (CI does it up front; this covers a fresh dev box). */
async function ensureSshdInstalled(): Promise<void> {
  if (existsSync(SSHD)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const install = Bun.spawn(
    [
      "sh",
      "-c",
      "apt-get install -y -q --no-install-recommends openssh-server || (apt-get update -q && apt-get install -y -q --no-install-recommends openssh-server)",
    ],
    { env, stdout: "ignore", stderr: "pipe" },
  );
  if ((await install.exited) !== 0 || !existsSync(SSHD))
    throw new Error(`openssh-server is not installed and apt-get could not install it: ${await new Response(install.stderr).text()}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function bannerAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("data", (data) => done(data.toString().startsWith("SSH-")));
    socket.once("error", () => done(false));
    socket.setTimeout(2000, () => done(false));
  });
}

/** Pids of every process below `root`, read from /proc (sshd forks one process tree per connection). */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const visit = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(root);
  return found;
}

/**
 * Starts Debian's sshd on a free loopback port with its own host key, authorized_keys and a
 * temp client key pair, all in a temp dir. Stop it with `stop()` (by pid).
 */
export async function startSshd(options: SshdOptions = {}): Promise<TestSshd> {
  await ensureSshdInstalled();
  // Privilege separation needs this directory; containers often lack it.
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const dir = makeTempDir("agentd-sshd-");
  const hostKeyPath = join(dir, "host_ed25519");
  const clientKeyPath = join(dir, "client_ed25519");
  await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "agentd-test-host", "-f", hostKeyPath]);
  await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "agentd-test-client", "-f", clientKeyPath]);
  const clientPublicKey = readFileSync(`${clientKeyPath}.pub`, "utf8").trim();
  writeFileSync(join(dir, "authorized_keys"), `${[clientPublicKey, ...(options.authorizedKeys ?? [])].join("\n")}\n`, { mode: 0o600 });
  const port = await freePort();
  const setEnv = Object.entries(options.env ?? {}).map(([key, value]) => `${key}=${value}`);
  const config = [
    `Port ${port}`,
    "ListenAddress 127.0.0.1",
    `HostKey ${hostKeyPath}`,
    `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
    `PidFile ${join(dir, "sshd.pid")}`,
    "StrictModes no",
    "UsePAM no",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "PermitRootLogin prohibit-password",
    "AllowTcpForwarding yes",
    "Subsystem sftp internal-sftp",
    "LogLevel ERROR",
    "MaxSessions 64",
    "MaxStartups 64",
    ...(setEnv.length ? [`SetEnv ${setEnv.join(" ")}`] : []),
    ...(options.ciphers ? [`Ciphers ${options.ciphers.join(",")}`] : []),
  ];
  const configPath = join(dir, "sshd_config");
  writeFileSync(configPath, `${config.join("\n")}\n`);

  let child: ReturnType<typeof Bun.spawn> | undefined;
  const start = async () => {
    child = Bun.spawn([SSHD, "-D", "-e", "-f", configPath], { stdin: "ignore", stdout: "ignore", stderr: Bun.file(join(dir, "sshd.log")) });
    const started = child;
    await waitFor(
      `sshd on port ${port}`,
      async () => {
        if (started.exitCode !== null) throw new GiveUp(`sshd exited ${started.exitCode}: ${readFileSync(join(dir, "sshd.log"), "utf8")}`);
        return bannerAnswers(port);
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
  };
  const kill = async () => {
    if (!child || child.exitCode !== null) return;
    const listener = child.pid;
    const all = [listener, ...descendants(listener)];
    for (const pid of all) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await child.exited;
    await waitFor("sshd processes gone", () => all.every((pid) => !isProcessAlive(pid)), { timeoutMs: 10_000 });
  };
  const knownHostsLine = () => {
    const [type, base64] = readFileSync(`${hostKeyPath}.pub`, "utf8").trim().split(/\s+/);
    return `[127.0.0.1]:${port} ${type} ${base64}`;
  };

  await start();
  const user = (await run(["id", "-un"])).trim();
  const sshd: TestSshd = {
    host: "127.0.0.1",
    port,
    user,
    dir,
    clientKeyPath,
    clientPublicKey,
    get knownHostsLine() {
      return knownHostsLine();
    },
    hostKeyPath,
    pid: () => child!.pid,
    kill,
    restart: start,
    async regenerateHostKey() {
      await kill();
      await run(["rm", "-f", hostKeyPath, `${hostKeyPath}.pub`]);
      await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "agentd-test-host-2", "-f", hostKeyPath]);
      await start();
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return sshd;
}
