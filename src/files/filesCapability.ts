import type { Capability } from "../core/capability.ts";
import type { CommandIdentity } from "../core/process/identity/index.ts";
import type { ToolDefinition } from "../core/tools/toolDefinition.ts";
import { createFileRoutes } from "./fileRoutes.ts";
import { createReadFileTool, createWriteFileTool } from "./fileTools.ts";
import { createLocalFiles } from "./localFiles.ts";
import type { FileAccess } from "./textFileAccess.ts";

/** Files of this host: /api/files (a hop's local side uses it) and the read_file / write_file tools. */
export function createFilesCapability(options: {
  readFileMaxBytes: number;
  /** agentd's own files (data dir, config file): out of the tools' reach. */
  ownPaths: readonly string[];
  /** Who the agent's commands run as: with a command user, the file tools reach only what it could. */
  identity?: CommandIdentity;
  /** Where reads and writes are done instead (agentd's monitor, when the worker is not root). */
  files?: FileAccess;
}): Capability {
  const files = options.files ?? createLocalFiles(options.ownPaths, options.identity);
  return {
    name: "files",
    routes: [{ path: "/api/files", app: createFileRoutes(files) }],
    tools: [
      createReadFileTool({ maxBytes: options.readFileMaxBytes, files }) as ToolDefinition,
      createWriteFileTool(files) as ToolDefinition,
    ],
    // read_file's limit is fixed when the tool is made.
    reload: (change) => change.report(["agent.read_file_max_bytes"], ["agent.read_file_max_bytes"]),
    // Holds nothing open.
    close: async () => undefined,
  };
}
