/** How a child ended, decoded from a waitpid status word. */
export interface ExitStatus {
  /** The shell convention: the exit code, or 128 + signal number when a signal ended it. */
  exitCode: number;
  /** Name of the signal that ended it, when one did. */
  signal?: string;
}

const SIGNAL_NAMES: Record<number, string> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  4: "SIGILL",
  5: "SIGTRAP",
  6: "SIGABRT",
  7: "SIGBUS",
  8: "SIGFPE",
  9: "SIGKILL",
  10: "SIGUSR1",
  11: "SIGSEGV",
  12: "SIGUSR2",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
  24: "SIGXCPU",
  25: "SIGXFSZ",
};

function signalName(signal: number): string {
  return SIGNAL_NAMES[signal] ?? `SIG${signal}`;
}

/** Decodes a status from waitpid() for a child that has terminated (not merely stopped). */
export function decodeWaitStatus(status: number): ExitStatus {
  const termSignal = status & 0x7f;
  if (termSignal === 0) return { exitCode: (status >> 8) & 0xff };
  return { exitCode: 128 + termSignal, signal: signalName(termSignal) };
}
