import type { Node, Parser } from "web-tree-sitter";
import { CODE_VARIABLES, ESCALATION_PROGRAMS, FILE_WRITERS, INTERPRETERS, MENTIONED_PROGRAMS, SHELLS, WRAPPERS } from "./shellNames.ts";
import { literalValue, programName } from "./shellWords.ts";

export interface ShellContext {
  /** Names of files this session wrote (write_file, redirections, tee, cp): running one asks. */
  written: ReadonlySet<string>;
}

export interface ShellFindings {
  /** Why the text needs the sudo scope; empty when nothing was found. */
  reasons: string[];
  /** Names of the files the text writes to, for the session's `written` set. */
  writes: string[];
}

const MAX_DEPTH = 6;

/**
 * Reads shell text as bash would parse it and says whether it could raise privileges: an
 * escalation program by name anywhere (pipelines, subshells, substitutions, functions, `sh -c`
 * text recursively), or a command word that is not a literal, `eval`, a pipe into a shell,
 * running or sourcing a file the session wrote. It only asks early: no_new_privs is the gate. Pure.
 */
export function analyzeShell(parser: Parser, text: string, context: ShellContext): ShellFindings {
  const findings = { reasons: new Set<string>(), writes: new Set<string>() };
  analyzeText(parser, text, context, findings, 0);
  return { reasons: [...findings.reasons], writes: [...findings.writes] };
}

interface Findings {
  reasons: Set<string>;
  writes: Set<string>;
}

function analyzeText(parser: Parser, text: string, context: ShellContext, out: Findings, depth: number): void {
  if (depth > MAX_DEPTH) {
    out.reasons.add("shell text nested too deeply to read");
    return;
  }
  const tree = parser.parse(text);
  if (!tree) {
    out.reasons.add("the command could not be parsed");
    return;
  }
  try {
    if (tree.rootNode.hasError) out.reasons.add("the command does not parse as bash");
    new Walker(parser, context, out, depth).visit(tree.rootNode);
  } finally {
    tree.delete();
  }
}

class Walker {
  constructor(
    private readonly parser: Parser,
    private readonly context: ShellContext,
    private readonly out: Findings,
    private readonly depth: number,
  ) {}

  visit(node: Node): void {
    if (node.type === "command") this.command(node);
    else if (node.type === "variable_assignment") this.assignment(node);
    else if (node.type === "file_redirect") this.redirect(node);
    for (const child of node.namedChildren) if (child) this.visit(child);
  }

  private ask(reason: string): void {
    this.out.reasons.add(reason);
  }

  private written(value: string): boolean {
    return this.context.written.has(programName(value)) || this.out.writes.has(programName(value));
  }

  private assignment(node: Node): void {
    const name = node.childForFieldName("name")?.text ?? "";
    if (CODE_VARIABLES.has(name)) this.ask(`sets ${name}, which decides what code runs`);
  }

  private redirect(node: Node): void {
    const operator = node.children.find((child) => child && !child.isNamed)?.text ?? "";
    if (!/^(>|>>|&>|&>>|>\||<>)$/.test(operator)) return;
    const destination = node.childForFieldName("destination");
    const value = destination ? literalValue(destination) : undefined;
    if (value !== undefined) this.out.writes.add(programName(value));
  }

  private command(node: Node): void {
    const name = node.childForFieldName("name");
    if (!name) return;
    const words = [name.namedChildren[0] ?? name, ...node.childrenForFieldName("argument").filter((n): n is Node => n !== null)];
    this.argv(words, node, new Set());
  }

  /** Judges one command's words; wrappers (env, xargs, find -exec, nohup, …) judge their inner command too. */
  private argv(words: Node[], command: Node, seen: Set<number>): void {
    const first = words[0]!;
    if (seen.has(first.id)) return;
    seen.add(first.id);
    const value = literalValue(first);
    if (value === undefined) {
      this.ask(`the command word ${JSON.stringify(first.text)} is not a literal`);
      return;
    }
    const program = programName(value);
    const args = words.slice(1);
    if (ESCALATION_PROGRAMS.has(program)) this.ask(`runs ${program}`);
    if (program === "eval") this.ask("runs eval");
    if ((program === "source" || program === ".") && (args.length === 0 || this.nonLiteralOrWritten(args[0]!)))
      this.ask(`sources ${args[0]?.text ?? "stdin"}`);
    if (value.includes("/") && this.written(value)) this.ask(`runs ${value}, a file written in this session`);
    if (SHELLS.has(program)) this.shell(args, command);
    if (INTERPRETERS.test(program)) {
      const script = args.find((arg) => !arg.text.startsWith("-"));
      if (script && this.nonLiteralOrWritten(script)) this.ask(`${program} runs ${script.text}, a file written in this session`);
    }
    for (const arg of args) {
      const text = literalValue(arg);
      if (text === undefined) continue;
      const mentioned = text.split(/[\s;&|()<>`$"'\\{}=,]+/).find((token) => MENTIONED_PROGRAMS.has(programName(token)));
      if (mentioned) this.ask(`an argument runs or names ${programName(mentioned)}`);
    }
    if (FILE_WRITERS.has(program)) this.fileWrites(program, args);
    if (WRAPPERS.has(program)) {
      args.forEach((arg, i) => {
        const text = literalValue(arg);
        if (text === undefined) this.ask(`${program} is given ${JSON.stringify(arg.text)}, which is not a literal`);
        else if (!text.startsWith("-") && !/^\w+=/.test(text)) this.argv(args.slice(i), command, seen);
      });
    }
  }

  private nonLiteralOrWritten(word: Node): boolean {
    const value = literalValue(word);
    return value === undefined || this.written(value);
  }

  private fileWrites(program: string, args: Node[]): void {
    const values = args.map((arg) => literalValue(arg)).filter((v): v is string => v !== undefined && !v.startsWith("-"));
    const targets = program === "tee" ? values : values.slice(-1);
    for (const target of targets) this.out.writes.add(programName(target));
  }

  /** `sh -c TEXT` reads TEXT; `sh FILE` runs FILE; a shell with neither reads its stdin. */
  private shell(args: Node[], command: Node): void {
    let runsText = false;
    let i = 0;
    for (; i < args.length; i++) {
      const option = literalValue(args[i]!);
      if (option === undefined) {
        this.ask(`a shell is given ${JSON.stringify(args[i]!.text)}, which is not a literal`);
        return;
      }
      if (option === "--" || option === "-" || option === "-s") {
        i = option === "--" ? i + 1 : args.length;
        break;
      }
      if (!/^[-+]/.test(option)) break;
      if (/^-[a-zA-Z]*c/.test(option)) runsText = true;
      if (/^[-+]o$/.test(option) || option === "--rcfile" || option === "--init-file") i++;
    }
    const operand = args[i];
    if (runsText) {
      const text = operand ? literalValue(operand) : undefined;
      if (text === undefined) this.ask("a shell runs text that is not a literal (sh -c)");
      else analyzeText(this.parser, text, this.context, this.out, this.depth + 1);
      return;
    }
    if (operand) {
      if (this.nonLiteralOrWritten(operand)) this.ask(`a shell runs ${operand.text}, a file written in this session`);
      return;
    }
    this.shellInput(command);
  }

  /** A shell reading stdin: fine alone (an interactive shell, judged line by line later), not fed by a pipe or redirect. */
  private shellInput(command: Node): void {
    const holder = command.parent?.type === "redirected_statement" ? command.parent : command;
    const pipeline = holder.parent;
    if (pipeline?.type === "pipeline" && pipeline.namedChildren[0]?.id !== holder.id) this.ask("a pipe into a shell");
    if (holder === command) return;
    for (const redirect of holder.childrenForFieldName("redirect")) {
      if (!redirect) continue;
      if (redirect.type === "heredoc_redirect") {
        const body = redirect.namedChildren.find((child) => child?.type === "heredoc_body");
        if (!body || body.namedChildren.length > 0) this.ask("a shell reads a heredoc that is not a literal");
        else analyzeText(this.parser, body.text, this.context, this.out, this.depth + 1);
      } else if (redirect.type === "herestring_redirect" || redirect.text.trimStart().startsWith("<")) {
        this.ask("a shell reads its commands from a redirect");
      }
    }
  }
}
