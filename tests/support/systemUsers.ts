/**
 * useradd and userdel for tests that make users. Neither waits for the passwd lock another process
 * holds (another test file running at the same time, an agentd making its service users): both
 * retry briefly on it. userdel also waits out a process of the user that is still exiting.
 */
const ATTEMPTS = 60;

/** Runs `useradd ...args NAME`; returns false when the user existed already (exit 9). */
export function addUser(args: readonly string[], name: string): boolean {
  for (let attempt = 1; ; attempt++) {
    const result = Bun.spawnSync(["useradd", ...args, name], { stdout: "ignore", stderr: "pipe" });
    if (result.exitCode === 0) return true;
    if (result.exitCode === 9) return false;
    const stderr = result.stderr.toString();
    if (!stderr.includes("cannot lock") || attempt === ATTEMPTS) throw new Error(`useradd ${name} failed: ${stderr}`);
    Bun.sleepSync(50);
  }
}

/** Removes the user (and nothing else); a user already gone is fine. */
export async function deleteUser(name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const result = Bun.spawnSync(["userdel", name], { stdout: "ignore", stderr: "pipe" });
    // 6: no such user.
    if (result.exitCode === 0 || result.exitCode === 6) return;
    const stderr = result.stderr.toString();
    const transient = stderr.includes("cannot lock") || stderr.includes("currently used by process");
    if (!transient || attempt === ATTEMPTS) throw new Error(`userdel ${name} failed: ${stderr}`);
    await Bun.sleep(100);
  }
}
