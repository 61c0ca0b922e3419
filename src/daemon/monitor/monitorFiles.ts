import { AgentdError } from "../../core/errors/index.ts";
import type { CommandIdentity } from "../../core/process/index.ts";
import { createLocalFiles, type ReadFileResult, readFileArgs, type WriteFileResult, writeFileArgs } from "../../files/index.ts";

/**
 * The file tools' work in the monitor, as the command user could do it. Loaded by the monitor's
 * first file request: the files capability and its schemas (zod) stay out of an idle supervisor.
 */
export function readAsCommandUser(args: unknown, ownPaths: readonly string[], identity: CommandIdentity): Promise<ReadFileResult> {
  return createLocalFiles(ownPaths, identity).read(validArgs(readFileArgs, args));
}

export function writeAsCommandUser(args: unknown, ownPaths: readonly string[], identity: CommandIdentity): Promise<WriteFileResult> {
  return createLocalFiles(ownPaths, identity).write(validArgs(writeFileArgs, args));
}

/** A file tool's arguments as its schema reads them; what it refuses is the worker's bad request. */
function validArgs<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { message: string } } },
  args: unknown,
): T {
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw new AgentdError("invalid_request", `Cannot use these file tool arguments: ${parsed.error.message}`);
  return parsed.data;
}
