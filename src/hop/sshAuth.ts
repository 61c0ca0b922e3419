import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import type { AnyAuthMethod, ParsedKey } from "ssh2";
import { HopError } from "./hopErrors.ts";

export interface AuthSources {
  /** `--identity`: the only key file tried when given (the agent still is). */
  identity?: string;
  identityFiles: readonly string[];
  /** SSH_AUTH_SOCK, when the agent should be offered. */
  agentSocket?: string;
}

export interface AuthPlan {
  methods: AnyAuthMethod[];
  /** Key files offered and files skipped (encrypted, unreadable), for the auth-failed message. */
  offered: string[];
  skipped: string[];
}

export function expandHome(path: string): string {
  if (path === "~") return homedir();
  return path.startsWith("~/") ? `${homedir()}/${path.slice(2)}` : path;
}

/** The local login name: USER/LOGNAME, else /etc/passwd by uid (Bun's userInfo() may say "unknown"). */
export function localUserName(): string {
  const fromEnv = process.env.USER || process.env.LOGNAME;
  if (fromEnv) return fromEnv;
  const uid = process.getuid?.();
  try {
    const line = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((entry) => entry.split(":")[2] === String(uid));
    if (line) return line.split(":")[0]!;
  } catch {
    // No passwd file: fall through.
  }
  return uid === 0 ? "root" : "user";
}

/** Why a file this process may not read is not readable: the worker reads keys as its own user, not as the caller. */
function readHint(error: unknown): string {
  if ((error as NodeJS.ErrnoException).code !== "EACCES") return "";
  const uid = process.getuid?.();
  return uid === 0 ? "" : ` (agentd reads it as uid ${uid}: give that user a key it can read, such as one under the data dir's .ssh)`;
}

/**
 * The auth methods to try, in order: the identity file (or the default key files that exist),
 * then the agent. Private keys are read here and never leave this process.
 */
export function planAuth(username: string, sources: AuthSources, parseKey: (key: Buffer) => ParsedKey | Error | ParsedKey[]): AuthPlan {
  const plan: AuthPlan = { methods: [], offered: [], skipped: [] };
  const files = sources.identity ? [sources.identity] : sources.identityFiles.map(expandHome).filter((path) => existsSync(path));
  for (const path of files) {
    let text: Buffer;
    try {
      text = readFileSync(path);
    } catch (error) {
      // The key the caller named cannot be read here: their request to fix (400), not a failure of the far side (502).
      if (sources.identity)
        throw new HopError(
          "hop_identity_unusable",
          `Cannot read the identity file ${path}: ${(error as Error).message}${readHint(error)}`,
          {
            param: "identity",
          },
        );
      plan.skipped.push(`${path} (unreadable)`);
      continue;
    }
    const parsed = parseKey(text);
    if (parsed instanceof Error) {
      const reason = /encrypted|passphrase/i.test(parsed.message)
        ? "protected by a passphrase; load it into ssh-agent instead"
        : parsed.message;
      if (sources.identity)
        throw new HopError("hop_identity_unusable", `Cannot use the identity file ${path}: ${reason}`, { param: "identity" });
      plan.skipped.push(`${path} (${reason})`);
      continue;
    }
    plan.methods.push({ type: "publickey", username, key: text });
    plan.offered.push(path);
  }
  if (sources.agentSocket && existsSync(sources.agentSocket)) {
    plan.methods.push({ type: "agent", username, agent: sources.agentSocket });
    plan.offered.push(`ssh-agent (${sources.agentSocket})`);
  }
  return plan;
}
