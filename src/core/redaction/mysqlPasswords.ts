import { ShellReader, STRING_END, TEXT_END } from "./shellReader.ts";
import { ENDS_COMMAND, ENDS_WORD, HASH, LESS, NEWLINE, SPACE, TAB, WordScanner } from "./shellWords.ts";

/**
 * mysql's password glued to `-p` (mysql -uroot -pX, -p'correct horse'), hidden in text that may be
 * a command. The text is split into words and commands as the shell splits it, from its start, so a
 * quote is known to open or to close: a ` -p` inside a quoted SQL string is no option, and no quoted
 * part is misread. A password is hidden in a command that runs a MySQL client: as its first word (after
 * assignments), or as an argument of a wrapper that runs it (sudo, env, docker exec, ssh…).
 * What is hidden never holds what could start another command when a second shell reads the word
 * again (ssh, eval, sh -c): `;&|<>()`, a backquote, a newline. The password is hidden up to the first
 * of them, quoted or escaped, or up to a quote left open (text that is no command, JSON held in a
 * string); the rest stays visible: a secret may show in part, a command never hides. A quoted part
 * naming a client is read again as commands (`sh -c 'mysql -pX'`, `ssh db "mysql -pX"`).
 */

/** The clients that take `-pX`, as a command's word: the name alone or a path to it in a bin directory (not /var/lib/mysql). */
const CLIENT =
  /^(?:.*\/s?bin\/)?(?:mysql(?:dump|admin|import|check|show|binlog|slap|pump|_upgrade)?|mariadb(?:-(?:dump|admin|import|check|show|binlog|slap|upgrade))?)$/;
/**
 * Commands that run the command in their arguments (sudo mysql …, docker exec db mysql …): there a
 * client's word counts unless it is an option's value (`docker run --name mysql -p…`).
 */
const WRAPPERS: ReadonlySet<string> = new Set([
  ..."sudo doas env nice nohup time timeout exec command ionice stdbuf xargs setsid runuser chroot flock".split(" "),
  ..."unbuffer docker docker-compose podman kubectl ssh sshpass eval watch su".split(" "),
]);
/**
 * Those whose arguments a second shell reads again, blanks and quotes and all: there a password is
 * hidden only up to a blank, a quote or a backslash in it too (`ssh db mysql -p'X -e "system …"'`
 * would hide an option the remote mysql gets).
 */
const REPARSERS: ReadonlySet<string> = new Set(["ssh", "eval", "watch", "su"]);
/**
 * Words a wrapper takes before the command it runs: ssh a host, docker exec a subcommand and a
 * container, timeout a duration… The first word after them (and after options and their values) is
 * the command: only when it is a client is a `-p` after it mysql's (`sudo systemctl show mysql -p…` is not).
 */
const POSITIONALS: Readonly<Record<string, number>> = {
  ssh: 1,
  docker: 2,
  podman: 2,
  "docker-compose": 2,
  kubectl: 2,
  timeout: 1,
  chroot: 1,
  flock: 1,
};
/** Words of the shell's grammar before a command (`do mysql …`, `if mysql …`, `! mysql …`): the command's word comes after them. */
const KEYWORDS: ReadonlySet<string> = new Set("do then else elif if while until ! { time".split(" "));
/** Short flags of the wrappers that take no value (`sudo -i mysql`, `ssh -t db mysql`); any other lone `-X` may take the next word. */
const FLAGS_WITHOUT_VALUE: ReadonlySet<string> = new Set(
  "-i -E -t -T -n -k -b -A -H -S -P -q -v -x -4 -6 -N -C -it -ti -d --rm".split(" "),
);
/** Shells and ssh: a here-document fed to one of them holds commands, and is read as such. */
const SHELLS: ReadonlySet<string> = new Set(["sh", "bash", "dash", "zsh", "ksh", "ssh", "su", "sudo"]);
/** Where a client may be named: a text with none is passed over, a quoted part with none is not read again. */
const CLIENT_NAME = /mysql|mariadb/g;

/** How deep commands held in quotes are read (sh -c '…', ssh host "…", JSON held in a string). */
const NESTING_LIMIT = 2;

/** Raw [start, end) spans of the passwords to hide, in order. */
export function mysqlPasswordSpans(text: string, json: boolean): Array<[number, number]> {
  const names: number[] = [];
  for (const match of text.matchAll(CLIENT_NAME)) names.push(match.index);
  if (names.length === 0) return [];
  const spans: Array<[number, number]> = [];
  commandsIn(new ShellReader(text, json), 0, names, spans, 0, false);
  return spans;
}

/**
 * Reads the commands from `from` to the reader's end, adding the spans to hide. A quoted part that
 * names a client (`sh -c 'mysql -pX …'`) is read again as commands of its own.
 */
function commandsIn(
  reader: ShellReader,
  from: number,
  names: readonly number[],
  spans: Array<[number, number]>,
  depth: number,
  reread: boolean,
): void {
  const text = reader.text;
  const scanner = new WordScanner(reader);
  /**
   * The command's first word (after assignments and keywords), the word before this one, and whether
   * the command is a client's. `reread`: this text is a quoted part's inside that a shell reads again
   * (escapes in it, or two second shells before it), so hiding stops at its blanks and quotes too.
   */
  let head: string | undefined;
  let previous: string | undefined;
  let client = false;
  /** Under a wrapper: the positional words still to pass before its command, and whether that command came. */
  let positionals = 0;
  let wrapped = false;
  /** Second shells before the client (ssh, eval…): one reads a quoted part's inside as written, two read it again. */
  let reparsers = 0;
  let heredoc: { delimiter: string; tabs: boolean; commands: boolean } | undefined;
  const endCommand = () => {
    head = undefined;
    previous = undefined;
    client = false;
    positionals = 0;
    wrapped = false;
    reparsers = 0;
  };
  for (let at = from; at < reader.end; ) {
    const code = reader.at(at);
    const width = reader.width;
    if (code === SPACE || code === TAB) {
      at += width;
    } else if (code === NEWLINE && heredoc) {
      // A here-document fed to a shell holds commands: its lines are read as the commands they are.
      at = heredoc.commands ? at + width : afterHeredoc(reader, at + width, heredoc);
      heredoc = undefined;
      endCommand();
    } else if (code === STRING_END || ENDS_COMMAND.has(code)) {
      endCommand();
      heredoc = undefined;
      at += width;
    } else if (code === LESS && reader.at(at + width) === LESS && reader.at(at + 2 * width) !== LESS) {
      const delimiter = heredocDelimiter(scanner, at + 2 * width);
      if (delimiter.word) heredoc = { delimiter: delimiter.word, tabs: delimiter.tabs, commands: SHELLS.has(head ?? "") };
      at = delimiter.end;
    } else if (ENDS_WORD.has(code)) {
      at += width;
    } else if (code === HASH) {
      at = lineEnd(reader, at);
    } else {
      const word = scanner.word(at);
      const value = word.value;
      const name = value.slice(value.lastIndexOf("/") + 1);
      if (head === undefined && !ASSIGNMENT.test(value) && !KEYWORDS.has(value)) {
        head = name;
        client = CLIENT.test(value);
        positionals = POSITIONALS[name] ?? 0;
        wrapped = !WRAPPERS.has(name);
        if (REPARSERS.has(name)) reparsers++;
      } else if (!wrapped && !value.startsWith("-") && !isOptionValue(previous) && !ASSIGNMENT.test(value)) {
        // The wrapper's own words, then the command it runs (another wrapper passes on to its own).
        if (positionals > 0) positionals--;
        else if (WRAPPERS.has(name)) {
          positionals = POSITIONALS[name] ?? 0;
          if (REPARSERS.has(name)) reparsers++;
        } else {
          wrapped = true;
          client = CLIENT.test(value);
        }
      }
      if (client && text.startsWith("-p", at) && value.length > 2) {
        let end = word.unsafeAt === -1 ? word.end : word.unsafeAt;
        if ((reread || reparsers > 0) && word.blankAt !== -1) end = Math.min(end, word.blankAt);
        if (end > at + 2) spans.push([at + 2, end]);
      } else if (depth < NESTING_LIMIT) {
        for (const [inside, close, literal] of word.parts)
          if (namesWithin(names, inside, close))
            commandsIn(new ShellReader(text, reader.json, close), inside, names, spans, depth + 1, reread || !literal || reparsers > 1);
      }
      // A quote left open: what follows in this command is not read as the shell reads it, and hides nothing.
      if (word.openQuote) client = false;
      previous = value;
      at = word.end > at ? word.end : at + width;
    }
  }
}

/** `NAME=value` before a command's word. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * Whether a word after `previous` may be that option's value (`--name mysql`, `-l mysql`, find's
 * `-user mysql`), not a command: an option of letters alone, not one known to take none (`--` ends options).
 */
function isOptionValue(previous: string | undefined): boolean {
  if (previous === undefined || previous === "--" || FLAGS_WITHOUT_VALUE.has(previous)) return false;
  return /^--?[A-Za-z][A-Za-z-]*$/.test(previous);
}

/** Whether a client's name begins in [from, to): `names` is sorted. */
function namesWithin(names: readonly number[], from: number, to: number): boolean {
  let low = 0;
  let high = names.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (names[middle]! < from) low = middle + 1;
    else high = middle;
  }
  return low < names.length && names[low]! < to;
}

/** The index of the newline that ends the line `at` is on (a comment's end), or of the text's or string's end. */
function lineEnd(reader: ShellReader, from: number): number {
  let at = from;
  for (;;) {
    const code = reader.at(at);
    if (code === TEXT_END || code === STRING_END || code === NEWLINE) return at;
    at += reader.width;
  }
}

/** The word after `<<` (its quotes removed) and whether `<<-` lets the end line be indented by tabs. */
function heredocDelimiter(scanner: WordScanner, from: number): { word: string; tabs: boolean; end: number } {
  const reader = scanner.reader;
  let at = from;
  const tabs = reader.at(at) === 45;
  if (tabs) at += reader.width;
  for (let code = reader.at(at); code === SPACE || code === TAB; code = reader.at(at)) at += reader.width;
  const code = reader.at(at);
  if (code === TEXT_END || code === STRING_END || ENDS_WORD.has(code)) return { word: "", tabs, end: at };
  const word = scanner.word(at);
  return { word: word.value, tabs, end: word.end };
}

/** Just past the here-document that begins at `from` (the line after its command): after its delimiter's line. */
function afterHeredoc(reader: ShellReader, from: number, heredoc: { delimiter: string; tabs: boolean }): number {
  let at = from;
  for (;;) {
    const end = lineEnd(reader, at);
    let line = "";
    for (let i = at; i < end; i += reader.width) line += String.fromCharCode(reader.at(i));
    if ((heredoc.tabs ? line.replace(/^\t+/, "") : line) === heredoc.delimiter) return end;
    if (reader.at(end) !== NEWLINE) return end;
    at = end + reader.width;
  }
}
