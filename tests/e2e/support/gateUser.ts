import { chownSync, chmodSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { addUser, deleteUser } from "../../support/systemUsers.ts";

/** A non-root user made for one test with a NOPASSWD sudoers rule, removed (user and rule) afterwards. */
export interface GateUser {
  name: string;
  uid: number;
  gid: number;
  /** Gives the user a directory (chown) with the mode given. */
  own(path: string, mode?: number): void;
  remove(): Promise<void>;
}

function run(argv: string[]): string {
  const result = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${result.stderr.toString()}`);
  return result.stdout.toString().trim();
}

export function createGateUser(home: string): GateUser {
  const name = `agd-gate-${process.pid}`;
  addUser(["--no-create-home", "--home-dir", home, "--shell", "/bin/bash", "--user-group"], name);
  const sudoers = `/etc/sudoers.d/${name}`;
  writeFileSync(sudoers, `${name} ALL=(ALL) NOPASSWD: ALL\n`, { mode: 0o440 });
  const uid = Number(run(["id", "-u", name]));
  const gid = Number(run(["id", "-g", name]));
  chownSync(home, uid, gid);
  return {
    name,
    uid,
    gid,
    own(path, mode = 0o700) {
      chownSync(path, uid, gid);
      chmodSync(path, mode);
    },
    async remove() {
      if (existsSync(sudoers)) rmSync(sudoers);
      // userdel refuses while a process of the user is still exiting (the worker's last terminals): deleteUser waits.
      await deleteUser(name);
    },
  };
}

/** True when the host can run the gate test: root (to make users), sudo, setpriv. */
export function canRunGateTest(): boolean {
  return process.getuid?.() === 0 && existsSync("/usr/bin/sudo") && existsSync("/usr/bin/setpriv");
}
