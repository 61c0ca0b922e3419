import { existsSync } from "node:fs";
import { addUser } from "../support/systemUsers.ts";

/** The throwaway user the guard tests run clients as: the command user, as agentd would have one. */
export const COMMAND_USER = "agentd-test-cmd";

export interface CommandUser {
  uid: number;
  gid: number;
}

function idOf(flag: "-u" | "-g"): number | undefined {
  const result = Bun.spawnSync(["id", flag, COMMAND_USER], { stdout: "pipe", stderr: "ignore" });
  return result.exitCode === 0 ? Number(result.stdout.toString().trim()) : undefined;
}

/** The command user, made when missing (kept afterwards: other test files use it, concurrently too). Needs root and setpriv. */
export function ensureCommandUser(): CommandUser {
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/setpriv") || !existsSync("/usr/bin/curl"))
    throw new Error("The peer guard tests run clients as another user: they need root, /usr/bin/setpriv and /usr/bin/curl");
  if (idOf("-u") === undefined) {
    // Another test process may make it meanwhile.
    addUser(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin"], COMMAND_USER);
  }
  const uid = idOf("-u");
  const gid = idOf("-g");
  if (uid === undefined || gid === undefined) throw new Error(`${COMMAND_USER} has no uid after useradd`);
  return { uid, gid };
}

/** `argv` as the user (its uid, its group, no other groups), as agentd starts a command. */
export function asUser(user: CommandUser, argv: readonly string[]): string[] {
  return ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--", ...argv];
}

/** A POST with curl, run as `user` when given (else as this test's own uid, in another process). */
export async function curlPost(
  url: string,
  options: { user?: CommandUser; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string }> {
  const headers = Object.entries(options.headers ?? {}).flatMap(([name, value]) => ["-H", `${name}: ${value}`]);
  const argv = ["curl", "-sS", "--max-time", "10", "-X", "POST", "-d", "{}", "-H", "content-type: application/json", ...headers];
  const command = [...argv, "-w", "\n%{http_code}", "-g", url];
  const child = Bun.spawn(options.user ? asUser(options.user, command) : command, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`curl exited ${code}: ${err}`);
  const cut = out.lastIndexOf("\n");
  return { status: Number(out.slice(cut + 1)), body: out.slice(0, cut) };
}
