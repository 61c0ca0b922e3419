import type { ChatCompletionTool } from "openai/resources/chat/completions";
import { z } from "zod";
import { AgentdError } from "../core/errors/index.ts";
import type { ToolDefinition } from "../core/tools/toolDefinition.ts";

/** The tools of the agent by name, and their descriptions in the shape the model reads. */
export class ToolCatalog {
  readonly byName: ReadonlyMap<string, ToolDefinition>;
  readonly forModel: ChatCompletionTool[];

  constructor(tools: readonly ToolDefinition[]) {
    const byName = new Map<string, ToolDefinition>();
    for (const tool of tools) {
      if (byName.has(tool.name)) throw new AgentdError("duplicate_tool", `Two tools are named ${tool.name}`);
      byName.set(tool.name, tool);
    }
    this.byName = byName;
    this.forModel = tools.map((tool) => {
      const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.parameters, { io: "input" }) as Record<string, unknown>;
      return { type: "function", function: { name: tool.name, description: tool.description, parameters } };
    });
  }
}
