import { asDiskFull } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import type { TakenOutput } from "./outputBuffer.ts";
import { type RenderedOutput, renderOutput } from "./renderOutput.ts";
import { DEFAULT_MAX_OUTPUT_TOKENS } from "./spawnRequest.ts";
import type { ToolOutputStore } from "./toolOutputStore.ts";

export interface ReadOptions {
  max_output_tokens?: number;
  strip_ansi?: boolean;
}

export interface OutputRead {
  taken: TakenOutput;
  rendered: RenderedOutput;
  /** The full output of a truncated read, kept for a later read of what was cut. */
  outputFile?: string;
  /** Why a truncated read has no full copy. */
  saveWarning?: string;
}

/** Takes what a session wrote since the last read, renders it for the caller, and keeps the full copy of a truncated read. */
export async function readSessionOutput(
  session: { id: string; takeOutput(): TakenOutput },
  options: ReadOptions,
  store: ToolOutputStore,
  log: Logger,
): Promise<OutputRead> {
  const taken = session.takeOutput();
  const rendered = renderOutput(taken.bytes, {
    maxOutputTokens: options.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    stripAnsi: options.strip_ansi ?? false,
  });
  if (!rendered.truncated) return { taken, rendered };
  try {
    return { taken, rendered, outputFile: await store.save(session.id, taken.bytes) };
  } catch (error) {
    // The command has run: its output is answered without the full copy rather than as a failure.
    const full = asDiskFull(error, store.directory);
    log.warn("pty.error", { op: "save_output", session_id: session.id, error: full ?? error });
    return { taken, rendered, saveWarning: `The full output could not be saved: ${full?.message ?? (error as Error).message}` };
  }
}
