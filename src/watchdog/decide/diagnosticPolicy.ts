/**
 * Which diagnostics tier 3 may run before it proposes: read-only programs only, judged on the argv
 * the model asked for (no shell: an argv is run as written). Pure.
 */
export type DiagnosticVerdict = { ok: true } | { ok: false; reason: string };

const SYSTEMCTL_READS = new Set([
  "status",
  "show",
  "cat",
  "is-active",
  "is-failed",
  "is-enabled",
  "list-units",
  "list-timers",
  "list-sockets",
]);
/** journalctl options that change the journal or never end. */
const JOURNALCTL_WRITES = /^--(rotate|flush|sync|relinquish-var|smart-relinquish-var|setup-keys|update-catalog|vacuum-\w+|follow)(=|$)/;
/** ss options that kill sockets or read and write files. */
const SS_LONG_REFUSED = /^--(kill|diag|filter)(=|$)/;

export const DIAGNOSTIC_PROGRAMS = ["systemctl", "journalctl", "ss", "df"] as const;

/** The first word that is not an option: systemctl's verb. */
function verbOf(args: readonly string[]): string | undefined {
  return args.find((a) => !a.startsWith("-"));
}

/** A short-option cluster (`-tlnpK`) holds one of `letters`. */
function clusterHas(arg: string, letters: string): boolean {
  return /^-[^-]/.test(arg) && [...arg.slice(1)].some((c) => letters.includes(c));
}

/**
 * `argv` may run as a diagnostic: one of the read-only programs by bare name with read-only
 * arguments, or exactly the failing check's own command (`checkArgv`).
 */
export function judgeDiagnostic(argv: readonly string[], checkArgv?: readonly string[]): DiagnosticVerdict {
  if (argv.length === 0 || argv.some((a) => typeof a !== "string" || a.includes("\0")))
    return { ok: false, reason: "expected an argv of strings" };
  if (checkArgv && argv.length === checkArgv.length && argv.every((a, i) => a === checkArgv[i])) return { ok: true };
  const [program, ...args] = argv as [string, ...string[]];
  if (!(DIAGNOSTIC_PROGRAMS as readonly string[]).includes(program))
    return {
      ok: false,
      reason: `${program} is not a read-only diagnostic (allowed: ${DIAGNOSTIC_PROGRAMS.join(", ")}, or the check's own command as configured)`,
    };
  switch (program) {
    case "systemctl": {
      const verb = verbOf(args);
      if (!verb || !SYSTEMCTL_READS.has(verb))
        return {
          ok: false,
          reason: `systemctl ${verb ?? ""} changes state or is not a read (allowed: ${[...SYSTEMCTL_READS].join(", ")})`.trim(),
        };
      return { ok: true };
    }
    case "journalctl": {
      const refused = args.find((a) => JOURNALCTL_WRITES.test(a) || clusterHas(a, "f"));
      return refused ? { ok: false, reason: `journalctl ${refused} changes the journal or never ends` } : { ok: true };
    }
    case "ss": {
      const refused = args.find((a) => SS_LONG_REFUSED.test(a) || clusterHas(a, "KDF"));
      return refused ? { ok: false, reason: `ss ${refused} kills sockets or opens files` } : { ok: true };
    }
    default:
      return { ok: true };
  }
}

/** The arguments agentd adds so a read never waits for a pager or a terminal. */
export function diagnosticArgv(argv: readonly string[]): string[] {
  const [program, ...args] = argv as [string, ...string[]];
  if (program === "systemctl" || program === "journalctl") return [program, "--no-pager", ...args];
  return [...argv];
}
