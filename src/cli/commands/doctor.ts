import { parse as parseJsonc } from "jsonc-parser";
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createConnection } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { loadConfig, resolveDataDir, type AgentdConfig } from "../../core/config/index.ts";
import { allMigrations } from "../../daemon/allMigrations.ts";
import { hopsConfigSchema, type HopsConfig } from "../../core/config/sections/hopConfig.ts";
import type { Logger } from "../../core/log/index.ts";
import { normalizeBaseUrl } from "../../proxy/index.ts";
import { PtyManager, ptyConfigSchema } from "../../pty/index.ts";
import { errorMessage } from "../../core/errors/index.ts";
import { type DoctorCheck, type DoctorResult, formatDoctorReport, runDoctorChecks } from "./doctorReport.ts";
import { cgroupCheck, privilegeGateCheck } from "./doctorSecurity.ts";
import { openStore, probeStoreWritable } from "../../core/store/index.ts";
import { parseDuration, type Command } from "../command.ts";

export { formatDoctorReport, runDoctorChecks } from "./doctorReport.ts";
export type { DoctorCheck, DoctorResult, DoctorStatus } from "./doctorReport.ts";

// The PTY manager logs each session it opens; doctor's report is the output here, so those stay quiet.
const quietLogger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => quietLogger };

function ptyCheck(): DoctorCheck {
  const hint =
    "agentd opens PTYs through libc (openpty) with bun:ffi and starts commands with its own spawner (bun:ffi cc): /dev/ptmx and a mounted /dev/pts are needed";
  return {
    name: "pty",
    async run() {
      const scratch = mkdtempSync(join(tmpdir(), "agentd-doctor-"));
      const manager = new PtyManager({ dataDir: scratch, config: ptyConfigSchema().parse({}), logger: quietLogger });
      const started = performance.now();
      try {
        const result = await manager.exec({ cmd: "true", shell: "/bin/sh", yield_time_ms: 10_000 });
        const ms = Math.round(performance.now() - started);
        if (result.running)
          return { name: "pty", status: "fail", detail: `'true' was still running after ${ms} ms in a pseudo-terminal`, hint };
        if (result.exit_code !== 0)
          return { name: "pty", status: "fail", detail: `'true' exited with ${result.exit_code} in a pseudo-terminal`, hint };
        return { name: "pty", status: "pass", detail: `ran 'true' in a pseudo-terminal (exit 0, ${ms} ms)` };
      } catch (error) {
        return { name: "pty", status: "fail", detail: `cannot run a command in a pseudo-terminal: ${errorMessage(error)}`, hint };
      } finally {
        await manager.close();
        rmSync(scratch, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The nearest directory of `path` that exists: where `agentd serve` would create what is missing.
 * Doctor creates nothing there (a data dir or store made by it would carry its owner and umask,
 * not the modes agentd gives its own), so a missing data dir is judged by what would hold it.
 */
function existingAncestor(path: string): string {
  let dir = resolve(path);
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

function dataDirCheck(dataDir: string): DoctorCheck {
  return {
    name: "data dir",
    async run() {
      const hint = "use --data-dir or AGENTD_DATA_DIR to pick a directory this user can write";
      const where = existingAncestor(dataDir);
      try {
        // A scratch entry of its own, so nothing of agentd's is touched; removed at once.
        rmSync(mkdtempSync(join(where, ".agentd-doctor-")), { recursive: true });
        const detail =
          where === resolve(dataDir) ? `${dataDir} is writable` : `${dataDir} does not exist yet; agentd serve can create it in ${where}`;
        return { name: "data dir", status: "pass", detail };
      } catch (error) {
        return { name: "data dir", status: "fail", detail: `cannot write in ${where}: ${errorMessage(error)}`, hint };
      }
    },
  };
}

function sqliteCheck(dataDir: string): DoctorCheck {
  return {
    name: "sqlite",
    async run() {
      const existing = join(dataDir, "agentd.db");
      // No store yet: a scratch one on the same file system, removed after, tells the same.
      const scratch = existsSync(existing) ? undefined : mkdtempSync(join(existingAncestor(dataDir), ".agentd-doctor-"));
      const path = scratch ? join(scratch, "agentd.db") : existing;
      const shown = scratch ? `a new store beside ${dataDir}` : existing;
      try {
        const db = openStore({ path, migrations: allMigrations });
        try {
          probeStoreWritable(db);
        } finally {
          db.close();
        }
        return { name: "sqlite", status: "pass", detail: `${shown} opens and takes a write` };
      } catch (error) {
        return {
          name: "sqlite",
          status: "fail",
          detail: `${shown}: ${errorMessage(error)}`,
          hint: "the store needs a local file system that supports locks (not every network mount does) and free space",
        };
      } finally {
        if (scratch) rmSync(scratch, { recursive: true, force: true });
      }
    },
  };
}

/** Asks each provider for its model list, as the proxy would, with the configured key. */
export function providerChecks(providers: AgentdConfig["providers"], timeoutMs: number, fetchImpl: typeof fetch = fetch): DoctorCheck {
  return {
    name: "providers",
    async run() {
      if (providers.length === 0)
        return {
          name: "providers",
          status: "skip",
          detail: 'none configured (add one under "providers" in agentd.jsonc, or set OPENAI_API_KEY)',
        };
      return Promise.all(
        providers.map(async (provider): Promise<DoctorResult> => {
          const name = `provider ${provider.name}`;
          const url = `${normalizeBaseUrl(provider.base_url)}/models`;
          const headers: Record<string, string> = provider.api_key ? { authorization: `Bearer ${provider.api_key}` } : {};
          const started = performance.now();
          try {
            const response = await fetchImpl(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
            await response.body?.cancel();
            const ms = Math.round(performance.now() - started);
            if (response.ok) return { name, status: "pass", detail: `GET ${url} answered ${response.status} in ${ms} ms` };
            const hint =
              response.status === 401 || response.status === 403
                ? "the provider refused the key: check api_key (and the variable it names)"
                : "check base_url: it should end at the API root, e.g. https://api.openai.com/v1";
            return { name, status: "fail", detail: `GET ${url} answered ${response.status}`, hint };
          } catch (error) {
            const timedOut = (error as Error).name === "TimeoutError";
            return {
              name,
              status: "fail",
              detail: timedOut ? `GET ${url} did not answer within ${timeoutMs} ms` : `GET ${url} failed: ${errorMessage(error)}`,
              hint: "check that this host reaches the provider (DNS, firewall, proxy settings)",
            };
          }
        }),
      );
    },
  };
}

function expandHome(path: string, home: string): string {
  return path.startsWith("~/") ? join(home, path.slice(2)) : path;
}

function agentSocketAnswers(path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** Hops need a key: an SSH agent that answers, or a readable identity file. */
export function sshCheck(hops: HopsConfig, env: Record<string, string | undefined>, home: string): DoctorCheck {
  return {
    name: "ssh keys",
    async run() {
      const socket = hops.use_agent ? env.SSH_AUTH_SOCK : undefined;
      if (socket && statSync(socket, { throwIfNoEntry: false })?.isSocket() && (await agentSocketAnswers(socket, 2000))) {
        return { name: "ssh keys", status: "pass", detail: `the SSH agent at ${socket} answers` };
      }
      for (const file of hops.identity_files.map((f) => expandHome(f, home))) {
        try {
          accessSync(file, constants.R_OK);
          return { name: "ssh keys", status: "pass", detail: `${file} is readable` };
        } catch {
          // Missing or unreadable: try the next one, as the hop itself would.
        }
      }
      return {
        name: "ssh keys",
        status: "fail",
        detail: `no SSH agent${socket ? ` at ${socket}` : " (SSH_AUTH_SOCK unset)"} and none of ${hops.identity_files.join(", ")} is readable`,
        hint: "start ssh-agent and ssh-add a key, or create one with ssh-keygen -t ed25519",
      };
    },
  };
}

/**
 * Hops are "configured" when the operator wrote a hops section: the parsed config always has one
 * (every key has a default), and a host that never hops must not fail doctor for lack of SSH keys.
 */
export function configNamesHops(configText: string): boolean {
  const raw: unknown = parseJsonc(configText);
  return typeof raw === "object" && raw !== null && !Array.isArray(raw) && "hops" in raw;
}

export const doctorCommand: Command = {
  path: ["doctor"],
  summary: "Check that agentd can work on this host: PTYs, data dir, SQLite, providers, SSH keys. Exit 0 only if all pass.",
  usage: "agentd doctor [--config FILE] [--data-dir DIR] [--timeout 10s]",
  options: { config: { type: "string", short: "c" }, "data-dir": { type: "string" }, timeout: { type: "string" } },
  help: [
    "  -c, --config FILE     config file (default: AGENTD_CONFIG, ./agentd.jsonc, ~/.config/agentd/agentd.jsonc)",
    "      --data-dir DIR    data directory (default: AGENTD_DATA_DIR, config data_dir, ./.agentd)",
    "      --timeout DUR     how long each provider may take to answer GET /models (default 10s)",
  ],
  async run({ values }) {
    const { config, path } = loadConfig({ explicitPath: values.config as string | undefined });
    const dataDir = resolveDataDir({ flag: values["data-dir"] as string | undefined, config });
    const timeoutMs = values.timeout ? parseDuration(values.timeout as string) : 10_000;
    const checks = [
      ptyCheck(),
      privilegeGateCheck(
        config.pty.run_as,
        { binary: process.execPath, dataDir, ...(path ? { config: path } : {}) },
        { user: config.supervisor.worker_user, port: config.server.port },
      ),
      cgroupCheck(),
      dataDirCheck(dataDir),
      sqliteCheck(dataDir),
      providerChecks(config.providers, timeoutMs),
    ];
    if (path && configNamesHops(readFileSync(path, "utf8")))
      checks.push(sshCheck(hopsConfigSchema().parse(config.hops), process.env, homedir()));
    else
      checks.push({ name: "ssh keys", run: async () => ({ name: "ssh keys", status: "skip", detail: "no hops section in the config" }) });
    const results = await runDoctorChecks(checks);
    process.stdout.write(formatDoctorReport(results));
    return results.some((result) => result.status === "fail") ? 1 : 0;
  },
};
