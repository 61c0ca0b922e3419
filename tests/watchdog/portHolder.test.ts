import { afterEach, describe, expect, test } from "bun:test";
import { findPortHolders } from "../../src/watchdog/actions/portHolder.ts";

let holder: Bun.Subprocess<"pipe", "pipe", "inherit"> | undefined;
afterEach(async () => {
  holder?.kill("SIGKILL");
  await holder?.exited;
  holder = undefined;
});

describe("who holds a port", () => {
  test("finds the pid of another process listening on the port", async () => {
    holder = Bun.spawn(
      [
        "python3",
        "-c",
        "import socket,sys\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen()\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()",
      ],
      { stdin: "pipe", stdout: "pipe", stderr: "inherit" },
    );
    const reader = holder.stdout.getReader();
    const { value } = await reader.read();
    const port = Number(new TextDecoder().decode(value).trim());
    expect(port).toBeGreaterThan(0);
    const holders = findPortHolders(port);
    expect(holders).toEqual([{ pid: holder.pid, command: expect.stringContaining("python3") }]);
  });

  test("a free port has no holder", () => {
    expect(findPortHolders(1)).toEqual([]);
  });
});
