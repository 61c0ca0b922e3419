import type { Capability } from "../core/capability.ts";
import type { ToolDefinition } from "../core/tools/toolDefinition.ts";
import { createFileRoutes } from "./fileRoutes.ts";
import { createReadFileTool, createWriteFileTool } from "./fileTools.ts";

/** Files of this host: /api/files (a hop's local side uses it) and the read_file / write_file tools. */
export function createFilesCapability(options: { readFileMaxBytes: number }): Capability {
  return {
    name: "files",
    routes: [{ path: "/api/files", app: createFileRoutes() }],
    tools: [createReadFileTool({ maxBytes: options.readFileMaxBytes }) as ToolDefinition, createWriteFileTool() as ToolDefinition],
    // Holds nothing open.
    close: async () => undefined,
  };
}
