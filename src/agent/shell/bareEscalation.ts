import { splitOption } from "../../core/shell/escalationWords.ts";
import type { Node, Parser } from "web-tree-sitter";
import { ambiguity } from "./ambiguousText.ts";
import { plainWords } from "./plainWords.ts";
import { literalValue, programName } from "./shellWords.ts";

/** Where an escalation program named by path may live: a copy anywhere else could be the model's. */
const SYSTEM_DIRS = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;

/**
 * The programs that may start without no_new_privs: setuid escalators that hand the command to
 * another user themselves. Not sudoedit (its editor runs as agentd's user, reading the model's
 * rc files), su (`su -c … <agentd's user>`), setpriv, capsh, runuser, sg, tmux… (they run their
 * command as agentd's user, unconfined).
 */
const PRIVILEGED_PROGRAMS: ReadonlySet<string> = new Set(["sudo", "sudo-rs", "doas", "pkexec", "run0"]);

/**
 * The options each may take before its command, and which of them take a value. Anything else
 * (`sudo -e`, `-E`/`--preserve-env`, `-A`, `-C`, `-D`, `-h`, `-l`) keeps the call confined.
 */
const OPTIONS: Record<string, { flags: ReadonlySet<string>; valued: ReadonlySet<string> }> = {
  sudo: {
    flags: new Set(["-n", "--non-interactive", "-H", "--set-home", "-i", "--login", "-s", "--shell", "-k", "-b", "--background"]),
    valued: new Set(["-u", "--user", "-g", "--group"]),
  },
  doas: { flags: new Set(["-n", "-s"]), valued: new Set(["-u"]) },
  pkexec: { flags: new Set(["--disable-internal-agent"]), valued: new Set(["--user"]) },
  run0: { flags: new Set(["--no-ask-password"]), valued: new Set(["-u", "--user", "-g", "--group"]) },
};
OPTIONS["sudo-rs"] = OPTIONS.sudo!;

export interface EscalationSelf {
  /** agentd's user name and uid. */
  user: string;
  uid: number;
  /** The uid a user name resolves to (passwd), undefined when unknown. */
  uidOf(name: string): number | undefined;
}

/**
 * The argv of `text` when it is nothing but an escalation: one simple command of plain words (no
 * expansion of any kind, tilde, glob and brace included; no assignment, redirection, pipeline or
 * list), a program of PRIVILEGED_PROGRAMS by name or from a system bin directory, only the options
 * it allows, run as a named, known user other than agentd's own. Only such a call starts without
 * no_new_privs once the sudo scope allows it, and it is exec'd as this argv with no shell reading
 * it, so the argv must be exactly bash's: plainWords (bash's own rules over a small part of the
 * language) and tree-sitter must agree on it, and the text must hold nothing bash and the approval
 * card read otherwise (ambiguity). Any other allowed call runs confined. Pure but for `self`.
 */
export function bareEscalationArgv(parser: Parser, text: string, self: EscalationSelf): string[] | undefined {
  if (ambiguity(text) !== undefined) return undefined;
  const argv = plainWords(text);
  if (!argv || !allowedEscalation(argv, self)) return undefined;
  const parsed = parsedWords(parser, text);
  return parsed && parsed.length === argv.length && parsed.every((word, i) => word === argv[i]) ? argv : undefined;
}

/** The words of `text` as tree-sitter reads it, when it is one simple command of literal words. */
function parsedWords(parser: Parser, text: string): string[] | undefined {
  const tree = parser.parse(text);
  if (!tree) return undefined;
  try {
    const root = tree.rootNode;
    if (root.hasError) return undefined;
    const statements = root.namedChildren.filter((node): node is Node => node !== null && node.type !== "comment");
    if (statements.length !== 1 || statements[0]!.type !== "command") return undefined;
    const words: string[] = [];
    for (const child of statements[0]!.namedChildren) {
      if (!child) continue;
      const value = literalValue(child.type === "command_name" ? (child.namedChildren[0] ?? child) : child);
      if (value === undefined) return undefined;
      words.push(value);
    }
    return words;
  } finally {
    tree.delete();
  }
}

/** Options that name the user the command runs as; the others that take a value name a group. */
const USER_OPTIONS: ReadonlySet<string> = new Set(["-u", "--user"]);
/** A user or group name as passwd spells one: never a number, `#uid`, or what an escalator parses leniently. */
const ACCOUNT_NAME = /^[a-z_][a-z0-9_-]*\$?$/i;

function allowedEscalation(argv: readonly string[], self: EscalationSelf): boolean {
  const program = argv[0];
  if (program === undefined || (program.includes("/") && !SYSTEM_DIRS.test(program))) return false;
  const name = programName(program);
  const options = OPTIONS[name];
  if (!PRIVILEGED_PROGRAMS.has(name) || !options) return false;
  let user = false;
  let group = false;
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--" || !word.startsWith("-")) break;
    const [flag, attached] = splitOption(word);
    if (options.flags.has(flag) && attached === undefined) continue;
    if (!options.valued.has(flag)) return false;
    const value = attached ?? argv[++i];
    if (value === undefined || !ACCOUNT_NAME.test(value)) return false;
    if (USER_OPTIONS.has(flag)) {
      // As agentd's own user (by any name) it would run unconfined, reading whatever the model wrote.
      const uid = self.uidOf(value);
      if (value === self.user || uid === undefined || uid === self.uid) return false;
      user = true;
    } else group = true;
  }
  // sudo -g without -u runs the command as the invoking user, with another group.
  return !group || user;
}
