import { redactText } from "../../core/redaction/index.ts";
import type { ToolCallTextPlan } from "../translate/toolCallTextSetup.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import type { Committed } from "../upstream/dispatcher.ts";

/**
 * Counts every answer to a request that offered tools, by model, with what reading tool calls in
 * its text found, repaired or could not parse; logs finds and failures (the watchdog's catalog
 * matches `proxy.tool_calls_unparsed`). On a whole answer it also names the repairs in
 * `x-agentd-repaired` (a streamed answer's headers are gone before its calls are read, so only the
 * metric says it there).
 */
export function reportToolCallText(
  core: ProxyCore,
  committed: Committed,
  model: string,
  plan: ToolCallTextPlan | undefined,
  headers?: Record<string, string>,
): void {
  if (!plan) return;
  const { families, repairs, unparsed } = plan.report;
  const provider = committed.provider.name;
  core.metrics.toolAnswer(
    provider,
    model,
    { textCalls: families.length, repairs: repairs.length, unparsed: unparsed.length, unparsedFormat: unparsed[0] },
    unparsed,
  );
  if (unparsed.length > 0)
    core.logger.warn("proxy.tool_calls_unparsed", {
      provider,
      model,
      format: unparsed[0],
      blocks: unparsed.length,
      sample: redactText(plan.report.unparsedSample ?? ""),
    });
  if (families.length === 0 && repairs.length === 0) return;
  core.metrics.toolCallText(provider, model, families, repairs);
  const kinds = plan.report.repairKinds();
  core.logger.info("proxy.tool_calls_read", {
    provider,
    model,
    formats: [...new Set(families)],
    calls: families.length,
    repairs: kinds,
  });
  if (headers && kinds.length > 0) headers["x-agentd-repaired"] = kinds.join(",");
}
