/**
 * Programs that raise privileges, or start a command outside agentd's process tree where
 * no_new_privs does not follow it (sshd, cron, at, systemd, a tmux server): asked in the sudo scope.
 */
export const ESCALATION_PROGRAMS: ReadonlySet<string> = new Set([
  "sudo",
  "sudoedit",
  "sudo-rs",
  "su",
  "su-rs",
  "visudo",
  "pkexec",
  "doas",
  "run0",
  "setpriv",
  "runuser",
  "capsh",
  "chroot",
  "nsenter",
  "unshare",
  "newgrp",
  "sg",
  "login",
  "ssh",
  "at",
  "batch",
  "crontab",
  "systemd-run",
  "machinectl",
  "tmux",
  "screen",
]);

/** Shells: `-c TEXT` runs TEXT, a file argument runs the file, no argument reads commands from stdin. */
export const SHELLS: ReadonlySet<string> = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "rbash"]);

/** Interpreters that run a script file given as their first argument. */
export const INTERPRETERS = /^(python[0-9.]*|perl|ruby|node|nodejs|bun|deno|php|lua[0-9.]*|tclsh|awk|gawk)$/;

/** Commands that run their arguments as another command. */
export const WRAPPERS: ReadonlySet<string> = new Set([
  "command",
  "builtin",
  "exec",
  "env",
  "nohup",
  "time",
  "nice",
  "ionice",
  "timeout",
  "stdbuf",
  "setsid",
  "xargs",
  "find",
  "chrt",
  "taskset",
  "watch",
  "flock",
  "strace",
  "ltrace",
  "unbuffer",
  "parallel",
  "script",
  "expect",
  "trap",
  "busybox",
]);

/** Variables that make a shell or the loader run code of the caller's choosing. */
export const CODE_VARIABLES: ReadonlySet<string> = new Set([
  "BASH_ENV",
  "ENV",
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "LD_AUDIT",
  "GCONV_PATH",
  "PATH",
  "SHELLOPTS",
  "BASHOPTS",
  "PROMPT_COMMAND",
  "PS4",
  "IFS",
]);

/** Commands whose last argument (or named option) is a file they write. */
export const FILE_WRITERS: ReadonlySet<string> = new Set(["tee", "cp", "mv", "install", "ln"]);

/** Escalation programs whose name anywhere in a literal argument asks too (`sh -c 'sudo id'`, `python -c '…sudo…'`). */
export const MENTIONED_PROGRAMS: ReadonlySet<string> = new Set([
  "sudo",
  "sudoedit",
  "sudo-rs",
  "su",
  "su-rs",
  "visudo",
  "pkexec",
  "doas",
  "run0",
  "setpriv",
  "runuser",
  "capsh",
  "chroot",
  "nsenter",
  "unshare",
  "systemd-run",
  "crontab",
]);
