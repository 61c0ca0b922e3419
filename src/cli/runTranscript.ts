// The transcript helpers alone: the agent's index.ts would load the whole agent (and the openai SDK) into a client command.
import { transcriptLine, type StreamedEvent, type TranscriptOutput } from "../agent/terminalTranscript.ts";
import { stripAnsi, terminalText } from "../core/text/index.ts";
import { humanDuration } from "./humanDuration.ts";

/** Lines of a tool's output shown under its end line. */
const TAIL_LINES = 6;

interface ToolResultView {
  exitCode?: number;
  tail: string[];
}

/** A tool's result preview (JSON text for exec_command and friends: output and exit_code) as its exit code and last lines. */
function readPreview(preview: unknown): ToolResultView {
  if (typeof preview !== "string" || !preview) return { tail: [] };
  let output = preview;
  let exitCode: number | undefined;
  try {
    const parsed = JSON.parse(preview) as Record<string, unknown>;
    if (parsed && typeof parsed === "object") {
      if (typeof parsed.exit_code === "number") exitCode = parsed.exit_code;
      const text = parsed.output ?? parsed.stdout ?? parsed.content;
      output = typeof text === "string" ? text : "";
    }
  } catch {
    // Not JSON: the preview is the tool's text itself.
  }
  // Colours and cursor moves dropped: the terminal guard would print them as \x1b[…, and they are not agentd's to play.
  const lines = terminalText(output)
    .replace(/\s+$/, "")
    .split("\n")
    .filter((line, i, all) => line || i < all.length - 1);
  return { exitCode, tail: lines.slice(-TAIL_LINES) };
}

function toolEnd(d: Record<string, unknown>): string {
  const { exitCode, tail } = readPreview(d.preview);
  // A denied or cancelled call did not fail: it did not run.
  const failed = d.outcome === "error" || d.outcome === "timeout" || (exitCode !== undefined && exitCode !== 0);
  const error = d.error as { message?: unknown; code?: unknown } | undefined;
  const what = d.outcome === "ok" && exitCode !== undefined ? `${exitCode === 0 ? "ok" : "failed"}, exit ${exitCode}` : String(d.outcome);
  const why = error ? `: ${stripAnsi(String(error.message ?? error.code))}` : "";
  const head = `${failed ? "✗" : "←"} ${d.tool} ${what} in ${humanDuration(Number(d.duration_ms ?? 0))}${why}`;
  return [head, ...tail.map((line) => `  │ ${line}`)].join("\n");
}

/** How `agentd run` shows each event: the agent's rendering, with tool endings that show exit codes, output tails and human durations. */
export function runTranscriptLine(event: StreamedEvent): TranscriptOutput {
  const d = event.data;
  if (event.type === "tool.end") return { note: toolEnd(d) };
  // The model's own text may quote coloured output; a sequence split across two deltas still reaches the guard, which shows it escaped.
  if (event.type === "text.delta") return { text: stripAnsi(String(d.delta ?? "")) };
  if (event.type === "tool.progress")
    return { note: `  … ${d.tool} ${stripAnsi(String(d.message ?? "running"))} (${humanDuration(Number(d.elapsed_ms ?? 0))})` };
  return transcriptLine(event);
}
