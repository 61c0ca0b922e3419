/**
 * What an allowed bare escalation (`sudo -u postgres psql -c …`) asks for, read from its argv
 * (bareEscalationArgv has already checked its options): the user it runs as and the words it
 * runs. Started as root, agentd runs those words itself as that user, so no sudoers rule and no
 * sudo binary are involved. Pure.
 */
export interface EscalationWords {
  /** The target user; root when the call names none. */
  user: string;
  command: string[];
}

const USER_OPTIONS = new Set(["-u", "--user"]);
const GROUP_OPTIONS = new Set(["-g", "--group"]);
/** Options that change only how the escalator itself asks or sets HOME, which agentd sets anyway. */
const HARMLESS = new Set(["-n", "--non-interactive", "-H", "--set-home", "-k", "--no-ask-password", "--disable-internal-agent"]);

export type EscalationReading = EscalationWords | { refused: string };

/** An option word as escalators read it: `--user=x` → ["--user", "x"], `-ux` → ["-u", "x"], `-n` → ["-n"]. */
export function splitOption(word: string): [string, string?] {
  return word.startsWith("--")
    ? (word.split("=", 2) as [string, string?])
    : [word.slice(0, 2), word.length > 2 ? word.slice(2) : undefined];
}

/** The user an escalation argv names with -u/--user (`sudo -u postgres …`); null when it names none. */
export function namedUser(argv: readonly string[]): string | null {
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--" || !word.startsWith("-")) break;
    const [flag, attached] = splitOption(word);
    if (USER_OPTIONS.has(flag)) return attached ?? argv[i + 1] ?? null;
    if (GROUP_OPTIONS.has(flag) && attached === undefined) i++;
  }
  return null;
}

export function readEscalation(argv: readonly string[]): EscalationReading {
  let user = "root";
  let i = 1;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") {
      i++;
      break;
    }
    if (!word.startsWith("-")) break;
    const [flag, attached] = splitOption(word);
    if (HARMLESS.has(flag) && attached === undefined) continue;
    if (USER_OPTIONS.has(flag) || GROUP_OPTIONS.has(flag)) {
      const value = attached ?? argv[++i];
      if (value === undefined) return { refused: `${flag} needs a value` };
      if (GROUP_OPTIONS.has(flag))
        return { refused: `${flag} (a group other than the user's) is not supported when agentd runs the call itself` };
      user = value;
      continue;
    }
    // -i, -s, -b: a login shell, a shell, the background — not the words the card showed.
    return { refused: `${argv[0]} ${flag} is not supported when agentd runs the call itself: ask for the command without it` };
  }
  const command = argv.slice(i);
  const program = command[0];
  if (program === undefined) return { refused: `${argv.join(" ")} names no command to run` };
  // sudo reads NAME=value there as a variable for the command; agentd would run it as a path.
  if (program.includes("=")) return { refused: `${program} sets a variable for the command, which agentd does not pass: ask without it` };
  // A relative path is found from the working directory, which the model may have filled.
  if (program.includes("/") && !program.startsWith("/"))
    return { refused: `${program} is a relative path: name the program, or give its absolute path` };
  return { user, command };
}
