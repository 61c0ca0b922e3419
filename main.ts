import { runCli } from "./src/cli/index.ts";

process.exitCode = await runCli(process.argv.slice(2));
