import { LOG_FORMATS, resolveLogFormat } from "../../core/log/humanLog.ts";
import { isLogLevel, LOG_LEVELS } from "../../core/log/logger.ts";
import { UsageError, type Command } from "../command.ts";

export const serveCommand: Command = {
  path: ["serve"],
  summary: "Run agentd: a supervisor that runs and watches the worker (HTTP proxy, agent, status page).",
  usage:
    "agentd serve [--port N] [--bind ADDR] [--config FILE] [--data-dir DIR] [--log-level LEVEL] [--log-format human|json] [--require-token]",
  options: {
    port: { type: "string", short: "p" },
    bind: { type: "string" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
    "log-level": { type: "string" },
    "log-format": { type: "string" },
    "require-token": { type: "boolean" },
    // Internal, not in --help: the supervisor starts its children with these.
    worker: { type: "boolean" },
    "resolve-config": { type: "boolean" },
  },
  help: [
    "  -p, --port N          port to listen on (default 7070; 0 picks a free port)",
    "      --bind ADDR       address to bind (default 127.0.0.1; others require the bearer token)",
    "  -c, --config FILE     config file (default: AGENTD_CONFIG, ./agentd.jsonc, ~/.config/agentd/agentd.jsonc)",
    "      --data-dir DIR    data directory (default: AGENTD_DATA_DIR, config data_dir, ./.agentd)",
    `      --log-level LEVEL ${LOG_LEVELS.join(" | ")}`,
    "      --log-format F    human | json | auto (default auto: human lines on a terminal, JSON otherwise)",
    "      --require-token   require the bearer token on a loopback bind too (<data_dir>/token)",
  ],
  async run({ values }) {
    const portText = values.port as string | undefined;
    const port = portText === undefined ? undefined : Number(portText);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
      throw new UsageError(`Cannot use "${portText}" as --port: expected an integer from 0 to 65535`);
    const logLevel = values["log-level"] as string | undefined;
    if (logLevel !== undefined && !isLogLevel(logLevel))
      throw new UsageError(`Cannot use "${logLevel}" as --log-level: expected one of ${LOG_LEVELS.join(", ")}`);
    const logFormat = values["log-format"] as string | undefined;
    if (logFormat !== undefined && !LOG_FORMATS.includes(logFormat))
      throw new UsageError(`Cannot use "${logFormat}" as --log-format: expected one of ${LOG_FORMATS.join(", ")}`);
    const options = {
      port,
      bind: values.bind as string | undefined,
      configPath: values.config as string | undefined,
      dataDir: values["data-dir"] as string | undefined,
      logLevel,
      requireToken: values["require-token"] === true ? true : undefined,
      logFormat: resolveLogFormat(logFormat, process.stdout.isTTY === true),
    };
    // Loaded on use so that quick commands (version, help) do not pay for the whole daemon.
    if (values.worker) return (await import("../../daemon/worker.ts")).runWorker(options);
    if (values["resolve-config"]) {
      const handoff = await import("../../daemon/configHandoff.ts");
      // Never on stdout: the resolved config holds the secrets its {env:…} references name.
      if (!handoff.handoffAvailable())
        throw new UsageError(
          "--resolve-config hands the config to a supervisor on fd 3, which is not open here; 'agentd config check' validates a config",
        );
      return handoff.writeResolvedConfig(options);
    }
    // Before anything else loads: the exec replaces this process.
    const jitProblem = (await import("../../daemon/supervisorJit.ts")).execWithoutOptimizingJit();
    return (await import("../../daemon/supervisor.ts")).runSupervisor(options, jitProblem);
  },
};
