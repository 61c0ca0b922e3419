import type { ToolCallTextPlan } from "../translate/toolCallTextSetup.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import type { Committed } from "../upstream/dispatcher.ts";

/**
 * Counts and logs what reading tool calls in text found and repaired in one answer, by model; on a whole
 * answer it also names the repairs in `x-agentd-repaired` (a streamed answer's headers are gone
 * before its calls are read, so only the metric says it there).
 */
export function reportToolCallText(
  core: ProxyCore,
  committed: Committed,
  model: string,
  plan: ToolCallTextPlan | undefined,
  headers?: Record<string, string>,
): void {
  if (!plan) return;
  const { families, repairs } = plan.report;
  if (families.length === 0 && repairs.length === 0) return;
  core.metrics.toolCallText(committed.provider.name, model, families, repairs);
  const kinds = plan.report.repairKinds();
  core.logger.info("proxy.tool_calls_read", {
    provider: committed.provider.name,
    model,
    formats: [...new Set(families)],
    calls: families.length,
    repairs: kinds,
  });
  if (headers && kinds.length > 0) headers["x-agentd-repaired"] = kinds.join(",");
}
