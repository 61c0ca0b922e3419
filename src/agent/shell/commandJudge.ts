import { hasInvisibleChars } from "../../core/text/index.ts";
import type { ToolDefinition } from "../../core/tools/toolDefinition.ts";
import { refuseAmbiguous } from "./ambiguousText.ts";
import { bashParser } from "./bashParser.ts";
import { privilegedArgvOf } from "./privilegedArgv.ts";
import { analyzeShell } from "./shellAnalysis.ts";
import { CODE_VARIABLES, SHELLS } from "./shellNames.ts";
import { programName } from "./shellWords.ts";

/** Where the names of the files each session wrote are remembered (the store, across restarts). */
export interface WrittenFiles {
  names(sessionId: string): Set<string>;
  add(sessionId: string, name: string): void;
}

interface SessionShellState {
  id: string;
  /** Names of files the session wrote. */
  written: Set<string>;
  /** Per PTY session: what was typed after the last newline, so a word split over calls is still read whole. */
  typed: Map<string, string>;
}

/**
 * Says why a call's command needs the sudo scope (empty: it does not), or refuses it outright
 * (AmbiguousCommandError) when bash could read it otherwise than the approval card shows it.
 * Remembers per agent session the files it wrote (also in the store, when given: they outlive a
 * restart) and the half-typed terminal lines (memory only: terminals do not outlive the worker).
 */
export class CommandJudge {
  readonly #sessions = new Map<string, SessionShellState>();

  constructor(private readonly writtenFiles?: WrittenFiles) {}

  async judge(sessionId: string, tool: ToolDefinition, args: unknown): Promise<string[]> {
    const record = (args ?? {}) as Record<string, unknown>;
    const state = this.#state(sessionId);
    if (tool.name === "write_file" && typeof record.path === "string") this.#wrote(state, [programName(record.path)]);
    if (tool.name === "exec_command" && typeof record.cmd === "string") return this.#exec(state, record);
    if (tool.name === "write_stdin" && typeof record.chars === "string" && typeof record.session_id === "string")
      return this.#typed(state, tool, record as { session_id: string; chars: string });
    return [];
  }

  /**
   * The argv a call allowed in the sudo scope starts with, without no_new_privs: only an
   * exec_command that is a bare escalation (bareEscalationArgv). Undefined: it runs confined.
   */
  async privilegedArgv(tool: ToolDefinition, args: unknown): Promise<string[] | undefined> {
    const cmd = (args as { cmd?: unknown } | null)?.cmd;
    if (tool.name !== "exec_command" || typeof cmd !== "string") return undefined;
    return privilegedArgvOf(cmd);
  }

  /**
   * Drops what is kept for a session gone idle: its written files come back from the store on its
   * next call. A half-typed terminal line lives in memory only and is kept, or a word split across
   * two turns (`sud` then `o id`) would be read in halves.
   */
  forget(sessionId: string): void {
    const state = this.#sessions.get(sessionId);
    if (!state) return;
    if ([...state.typed.values()].some((line) => line !== "")) return;
    if (!this.writtenFiles && state.written.size > 0) return;
    this.#sessions.delete(sessionId);
  }

  /** Sessions whose state is held in memory. */
  get size(): number {
    return this.#sessions.size;
  }

  async #exec(state: SessionShellState, args: Record<string, unknown>): Promise<string[]> {
    const shown = [args.cmd, args.workdir, args.shell].filter((text): text is string => typeof text === "string");
    refuseAmbiguous("run this command", shown);
    const reasons: string[] = [];
    if (typeof args.shell === "string" && !SHELLS.has(programName(args.shell))) reasons.push(`runs under ${args.shell}, not a known shell`);
    for (const name of Object.keys((args.env as Record<string, unknown> | undefined) ?? {}))
      if (CODE_VARIABLES.has(name)) reasons.push(`sets ${name}, which decides what code runs`);
    if (shown.some(hasInvisibleChars)) reasons.push("contains characters that reorder or hide text (bidi, zero-width)");
    const found = analyzeShell(await bashParser(), args.cmd as string, { written: state.written });
    this.#wrote(state, found.writes);
    return [...reasons, ...found.reasons];
  }

  async #typed(state: SessionShellState, tool: ToolDefinition, args: { session_id: string; chars: string }): Promise<string[]> {
    if (args.chars === "") return [];
    const reader = tool.inputReader?.(args);
    // A program that is not a shell (python3, vim, a pager) reads the text; unknown counts as a shell.
    const shell = !reader || SHELLS.has(reader.comm);
    // Ctrl-C drops the line being typed, Ctrl-D ends input, and a terminal reads CR as Enter.
    const chars = args.chars.replace(/[\x03\x04\r]/g, "\n");
    const text = (state.typed.get(args.session_id) ?? "") + chars;
    if (shell) {
      // Before any reason: no card shows a line the shell would read otherwise (nor a line-editing key).
      refuseAmbiguous("type this into the terminal", [text]);
      state.typed.set(args.session_id, text.slice(text.lastIndexOf("\n") + 1));
    }
    // A hop's terminal, or one whose foreground program cannot be read: it may run with raised
    // privileges (an approved sudo call) and nothing here can tell.
    if (tool.inputReader && !reader) return [`types into terminal ${args.session_id}, whose program agentd cannot see`];
    if (reader?.privileged)
      return [
        `types into terminal ${args.session_id} (${reader.command ?? reader.comm}), started with raised privileges, now running ${reader.comm}`,
      ];
    if (!shell) return [];
    if (hasInvisibleChars(chars)) return ["typed characters that reorder or hide text (bidi, zero-width)"];
    const found = analyzeShell(await bashParser(), text, { written: state.written });
    this.#wrote(state, found.writes);
    return found.reasons;
  }

  #wrote(state: SessionShellState, names: readonly string[]): void {
    for (const name of names) {
      if (state.written.has(name)) continue;
      state.written.add(name);
      this.writtenFiles?.add(state.id, name);
    }
  }

  #state(sessionId: string): SessionShellState {
    let state = this.#sessions.get(sessionId);
    if (!state) {
      state = { id: sessionId, written: this.writtenFiles?.names(sessionId) ?? new Set(), typed: new Map() };
      this.#sessions.set(sessionId, state);
    }
    return state;
  }
}
