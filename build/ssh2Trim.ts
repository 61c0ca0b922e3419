import type { BunPlugin } from "bun";
import { getCiphers } from "node:crypto";

const LEFT_OUT = "agentd-left-out";

/**
 * Leaves out of the binary the parts of ssh2 that cannot work under Bun but cost a hop's worker
 * memory when loaded (measured: about 2.5 MB of the worker's RSS and a compiler thread):
 * - `sshcrypto.node`, ssh2's native binding, is built for Node's ABI and fails to initialise under Bun
 *   (ssh2 then uses node:crypto), yet loading it maps the addon and libstdc++;
 * - `cpu-features` (a native addon too) only decides where ssh2 lists chacha20-poly1305;
 * - `poly1305.js` compiles a WebAssembly module at import, used by chacha20-poly1305 alone, which
 *   ssh2 never offers here: it offers a cipher only when node:crypto has it, and Bun's has no chacha20.
 * ssh2 requires both addons inside try/catch, so a module that throws is how "absent" reads to it.
 */
export const ssh2Trim: BunPlugin = {
  name: "ssh2-trim",
  setup(build) {
    // Should Bun's crypto gain chacha20, ssh2 would offer chacha20-poly1305 and need the WebAssembly.
    if (getCiphers().includes("chacha20"))
      throw new Error("This Bun's node:crypto has chacha20, so ssh2 offers chacha20-poly1305: keep ssh2's poly1305.js in the build");
    build.onResolve({ filter: /^cpu-features$|\/sshcrypto\.node$/ }, (args) => ({ path: args.path, namespace: LEFT_OUT }));
    build.onLoad({ filter: /.*/, namespace: LEFT_OUT }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is left out of agentd's binary`)});`,
      loader: "js",
    }));
    build.onLoad({ filter: /\/ssh2\/lib\/protocol\/crypto\/poly1305\.js$/ }, () => ({
      // ssh2 awaits this factory at import and calls poly1305_auth only for chacha20-poly1305.
      contents: `module.exports = async () => ({
  _malloc: () => 0,
  cwrap: () => () => { throw new Error("chacha20-poly1305 is left out of agentd's binary"); },
});`,
      loader: "js",
    }));
  },
};
