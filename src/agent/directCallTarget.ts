import { AgentdError } from "../core/errors/index.ts";
import { LOCAL_TARGET, type ToolDefinition, type ToolTarget } from "../core/tools/toolDefinition.ts";
import type { ToolCatalog } from "./toolCatalog.ts";

/** The target a call names: this host, or a hop the hop tool finds open (as when a session switches). */
export async function resolveCallTarget(
  catalog: ToolCatalog,
  local: ToolTarget,
  name: string,
  sessionId: string,
  signal: AbortSignal,
): Promise<ToolTarget> {
  if (name === LOCAL_TARGET) return local;
  const hop = catalog.byName.get("hop");
  if (!hop) throw new AgentdError("target_not_connected", `No hops in this agentd; ${name} cannot be reached`);
  // The hop tool checks the hop is open and gives its target, as it does when a session switches.
  let found: ToolTarget | undefined;
  await hop.execute(
    { target: name },
    {
      signal,
      sessionId,
      progress: () => {},
      switchTarget: (target) => {
        if (target !== LOCAL_TARGET) found = target;
      },
    },
  );
  if (!found) throw new AgentdError("target_not_connected", `The hop ${name} is not connected`);
  return found;
}

/** Takes `target` off a host-bound tool's arguments (tools that are not host-bound always run here). */
export function splitTarget(tool: ToolDefinition, text: string): { target: string; rest: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { target: LOCAL_TARGET, rest: text };
  }
  if (!tool.hostBound || !value || typeof value !== "object" || Array.isArray(value) || !("target" in value))
    return { target: LOCAL_TARGET, rest: text };
  const { target, ...rest } = value as Record<string, unknown>;
  return { target: typeof target === "string" && target !== "" ? target : LOCAL_TARGET, rest: JSON.stringify(rest) };
}
