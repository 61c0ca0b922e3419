import { afterAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { localIdentityHost } from "../../../src/core/process/identity/index.ts";

// Two agentds starting at once on a fresh machine both make the service users; useradd does not wait
// for the passwd lock another one holds. Here a live process holds it, as a concurrent useradd would.
const NAME = "agentd-locktest";
const LOCK = "/etc/passwd.lock";
let holder: ReturnType<typeof Bun.spawn> | undefined;

afterAll(() => {
  holder?.kill("SIGKILL");
  rmSync(LOCK, { force: true });
  Bun.spawnSync(["userdel", NAME], { stderr: "ignore" });
});

test("a user is made once the passwd lock another process held is released", async () => {
  if (process.getuid?.() !== 0) throw new Error("needs root (useradd), as agentd's supervisor does");
  Bun.spawnSync(["userdel", NAME], { stderr: "ignore" });
  holder = Bun.spawn(["sleep", "30"]);
  writeFileSync(LOCK, String(holder.pid), { flag: "wx" });
  const locked = Bun.spawnSync(["useradd", "--system", "--no-create-home", "agentd-locktest-probe"], { stderr: "pipe" });
  expect(locked.stderr.toString()).toContain("cannot lock");
  // The lock goes away while createUser retries.
  const release = setTimeout(() => rmSync(LOCK, { force: true }), 300);
  const made = Bun.spawn(
    [
      process.execPath,
      "-e",
      `import { localIdentityHost } from "${import.meta.dir}/../../../src/core/process/identity/index.ts"; localIdentityHost().createUser("${NAME}", false);`,
    ],
    { stderr: "pipe" },
  );
  expect(await made.exited).toBe(0);
  clearTimeout(release);
  expect(localIdentityHost().passwd()).toContain(`${NAME}:`);
});
