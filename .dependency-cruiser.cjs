/**
 * The layers of agentd (see docs/architecture.md "Layout"): core ← http ← capabilities ← status ← daemon, cli.
 * `npm run deps` prints every import that crosses them the wrong way.
 */
const CAPABILITIES = "(proxy|pty|files|agent|hop|watchdog|mcp|telemetry)";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-file-cycles",
      severity: "error",
      comment: "Files import each other in a circle; break it by moving the shared piece down a layer.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-folder-cycles",
      severity: "error",
      comment: "Folders import each other in a circle.",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "core-imports-core-only",
      severity: "error",
      comment: "core is the bottom layer: it knows nothing of HTTP, capabilities, views or entry points.",
      from: { path: "^src/core/" },
      to: { path: "^src/", pathNot: "^src/core/" },
    },
    {
      name: "http-imports-core-only",
      severity: "error",
      comment: "src/http is plumbing shared by every capability; it imports core only.",
      from: { path: "^src/http/" },
      to: { path: "^src/", pathNot: "^src/(core|http)/" },
    },
    {
      name: "capability-imports-core-http-and-indexes",
      severity: "error",
      comment: "A capability imports core, src/http, its own files and other capabilities through their index.ts only.",
      from: { path: `^src/${CAPABILITIES}/` },
      to: {
        path: "^src/",
        pathNot: [`^src/(core|http)/`, `^src/$1/`, `^src/${CAPABILITIES}/index\\.ts$`],
      },
    },
    {
      name: "only-status-renders",
      severity: "error",
      comment: "src/status is the only place that renders HTML.",
      from: { path: "^src/", pathNot: "^src/status/" },
      to: { path: ["^node_modules/hono/dist/.*(jsx|html)", "\\.tsx$"] },
    },
    {
      name: "no-jsx-outside-status",
      severity: "error",
      comment: "Templates (.tsx) live in src/status.",
      from: { path: "\\.tsx$", pathNot: "^src/status/" },
      to: {},
    },
    {
      name: "entry-points-are-not-imported",
      severity: "error",
      comment: "Nothing imports daemon or cli but main.ts and cli itself.",
      from: { path: "^src/", pathNot: "^src/(cli|daemon)/" },
      to: { path: "^src/(daemon|cli)/" },
    },
    {
      name: "status-is-not-imported-below",
      severity: "error",
      comment: "Views sit above the capabilities; only daemon and cli compose them.",
      from: { path: "^src/", pathNot: "^src/(status|daemon|cli)/" },
      to: { path: "^src/status/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.d\\.ts$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "bun", "default"], extensions: [".ts", ".tsx", ".js"] },
  },
};
