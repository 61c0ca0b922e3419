import { CONFINE_VERB } from "./src/core/process/confinement/confineVerb.ts";

// The confinement helper starts before every command the agent runs: it loads nothing else.
if (process.argv[2] === CONFINE_VERB) {
  const { confineMain } = await import("./src/pty/confine/confineMain.ts");
  process.exitCode = confineMain(process.argv.slice(3));
} else {
  const { runCli } = await import("./src/cli/index.ts");
  process.exitCode = await runCli(process.argv.slice(2));
}
