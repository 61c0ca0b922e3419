import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type * as Ssh2 from "ssh2";
import { ssh2Trim } from "../../build/ssh2Trim.ts";
import { startSshd, type TestSshd } from "../support/sshd.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

const require = createRequire(import.meta.url);

/** ssh2 bundled as the binary bundles it, with the trim plugin; the outputs' paths and the loaded module. */
async function trimmedSsh2(): Promise<{ outputs: string[]; ssh2: typeof Ssh2 }> {
  const dir = makeTempDir("agentd-ssh2-trim-");
  const entry = join(dir, "entry.ts");
  writeFileSync(entry, `import ssh2 from ${JSON.stringify(require.resolve("ssh2"))};\nexport default ssh2;\n`);
  const result = await Bun.build({ entrypoints: [entry], outdir: join(dir, "out"), target: "bun", format: "esm", plugins: [ssh2Trim] });
  if (!result.success) throw new Error(result.logs.join("\n"));
  const outputs = result.outputs.map((output) => output.path);
  const bundled = (await import(outputs.find((path) => path.endsWith("entry.js"))!)) as { default: typeof Ssh2 };
  return { outputs, ssh2: bundled.default };
}

/** Connects with the client's defaults and runs `echo` once; resolves what it printed, rejects the handshake's error. */
function echoOver(ssh2: typeof Ssh2, sshd: TestSshd): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    client.once("error", (error) => {
      client.destroy();
      reject(error);
    });
    client.once("ready", () =>
      client.exec("echo trimmed", (error, stream) => {
        if (error) return reject(error);
        let out = "";
        stream.on("data", (data: Buffer) => {
          out += data.toString();
        });
        stream.once("close", () => {
          client.end();
          resolve(out);
        });
      }),
    );
    client.connect({ host: sshd.host, port: sshd.port, username: sshd.user, privateKey: readFileSync(sshd.clientKeyPath) });
  });
}

describe("ssh2 as the binary bundles it (build/ssh2Trim.ts)", () => {
  let trimmed: Awaited<ReturnType<typeof trimmedSsh2>>;
  const servers: TestSshd[] = [];

  beforeAll(async () => {
    trimmed = await trimmedSsh2();
  });
  afterAll(async () => {
    for (const sshd of servers) await sshd.stop();
    removeTempDirs();
  });

  test("ssh2 under this Bun never offers chacha20-poly1305, the one cipher the left-out WebAssembly serves", () => {
    const { SUPPORTED_CIPHER } = require("ssh2/lib/protocol/constants.js") as { SUPPORTED_CIPHER: string[] };
    expect(SUPPORTED_CIPHER).toContain("aes128-gcm@openssh.com");
    expect(SUPPORTED_CIPHER.filter((name) => name.startsWith("chacha20"))).toEqual([]);
  });

  test("the bundle carries neither native addon nor the Poly1305 WebAssembly", () => {
    expect(trimmed.outputs.filter((path) => path.endsWith(".node"))).toEqual([]);
    const code = trimmed.outputs.map((path) => readFileSync(path, "utf8")).join("\n");
    expect(code).not.toContain("data:application/octet-stream;base64");
    expect(code).toContain("is left out of agentd's binary");
  });

  test("the trimmed ssh2 completes a handshake with a stock OpenSSH and runs a command", async () => {
    const sshd = await startSshd();
    servers.push(sshd);
    expect(await echoOver(trimmed.ssh2, sshd)).toBe("trimmed\n");
  });

  test("a server that accepts chacha20-poly1305 alone is refused at the handshake, naming the cipher", async () => {
    const sshd = await startSshd({ ciphers: ["chacha20-poly1305@openssh.com"] });
    servers.push(sshd);
    await expect(echoOver(trimmed.ssh2, sshd)).rejects.toThrow(/cipher/i);
  });
});
