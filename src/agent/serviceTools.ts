import { z } from "zod";
import { runCommand } from "../core/process/index.ts";
import type { ServiceConfig } from "../core/config/sections/servicesConfig.ts";
import { defineTool, ToolError, type ToolContext, type ToolDefinition } from "../core/tools/toolDefinition.ts";

async function runShell(
  command: string,
  timeoutMs: number,
  ctx: ToolContext,
  confined: boolean,
): Promise<{ exit_code: number | null; output: string; timed_out: boolean }> {
  const result = await runCommand({ argv: ["sh", "-c", command], timeoutMs, signal: ctx.signal, confined });
  return { exit_code: result.exit_code, output: (result.truncated ? "…" : "") + result.output.trimEnd(), timed_out: result.timed_out };
}

export function createServiceTools(services: readonly ServiceConfig[]): ToolDefinition[] {
  const names = services.map((s) => s.name);
  const find = (name: string) => {
    const service = services.find((s) => s.name === name);
    if (!service)
      throw new ToolError(
        "unknown_service",
        names.length
          ? `No service named ${name}; configured: ${names.join(", ")}`
          : `No services are configured (add them under "services" in agentd.jsonc)`,
      );
    return service;
  };
  const parameters = z.strictObject({
    name: z
      .string()
      .min(1)
      .describe(names.length ? `One of: ${names.join(", ")}` : "A service named in the config"),
  });
  const status = defineTool({
    name: "service_status",
    description: "Run a configured service's status command and return its exit code and output.",
    parameters,
    scope: "read",
    timeoutMs: 120_000,
    async execute(args, ctx) {
      const service = find(args.name);
      // A status command runs unasked (read scope): confined, like the agent's own commands.
      const result = await runShell(service.status, service.timeout_s * 1000, ctx, true);
      return { service: service.name, command: service.status, healthy: result.exit_code === 0, ...result };
    },
  });
  const restart = defineTool({
    name: "restart_service",
    description: "Run a configured service's restart command, then its status command.",
    parameters,
    scope: "service_control",
    timeoutMs: 600_000,
    async execute(args, ctx) {
      const service = find(args.name);
      ctx.progress(`restarting ${service.name}`);
      // Asked in the service_control scope, and a restart may need sudo: it runs as configured.
      const restarted = await runShell(service.restart, service.timeout_s * 1000, ctx, false);
      if (restarted.exit_code !== 0)
        throw new ToolError(
          "restart_failed",
          `${service.restart} exited with ${restarted.exit_code}${restarted.timed_out ? " (timed out)" : ""}: ${restarted.output.slice(-2000)}`,
        );
      const after = await runShell(service.status, service.timeout_s * 1000, ctx, true);
      return {
        service: service.name,
        restarted: true,
        restart_output: restarted.output,
        healthy: after.exit_code === 0,
        status_output: after.output,
      };
    },
  });
  return [status as ToolDefinition, restart as ToolDefinition];
}
