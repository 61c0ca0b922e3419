import type { Node, Parser } from "web-tree-sitter";
import { ESCALATION_PROGRAMS } from "./shellNames.ts";
import { literalValue, programName } from "./shellWords.ts";

/** Where an escalation program named by path may live: a copy anywhere else could be the model's. */
const SYSTEM_DIRS = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;

/**
 * Whether `text` is nothing but one escalation program (sudo, doas, …) run with plain words:
 * one simple command, its name a literal (by name, or a path in a system bin directory), every
 * argument a literal, no assignment, redirection, substitution, pipeline or list. Only such a call
 * starts without no_new_privs once the sudo scope allows it: anything else in the text (a `git`
 * reading a config the model wrote, `$(…)`, a script) would run with the privileges the person
 * meant for sudo alone, so an allowed call that is not bare runs confined. Pure.
 */
export function isBareEscalation(parser: Parser, text: string): boolean {
  const tree = parser.parse(text);
  if (!tree) return false;
  try {
    const root = tree.rootNode;
    if (root.hasError) return false;
    const statements = root.namedChildren.filter((node): node is Node => node !== null && node.type !== "comment");
    if (statements.length !== 1 || statements[0]!.type !== "command") return false;
    const command = statements[0]!;
    for (const child of command.namedChildren) {
      if (!child) continue;
      if (child.type === "command_name") continue;
      if (literalValue(child) === undefined) return false;
    }
    const name = command.childForFieldName("name");
    const value = name ? literalValue(name.namedChildren[0] ?? name) : undefined;
    if (value === undefined || !ESCALATION_PROGRAMS.has(programName(value))) return false;
    return !value.includes("/") || SYSTEM_DIRS.test(value);
  } finally {
    tree.delete();
  }
}
