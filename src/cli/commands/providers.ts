import type { ProviderStatus, StoredQuirk } from "../../proxy/index.ts";
import { renderTextTable } from "../../status/statusTextTable.ts";
import { UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonJson, daemonTargetFrom } from "../daemonClient.ts";

const WIDTH = 100;

function adminCall<T>(values: Record<string, string | boolean | undefined>, path: string, method = "GET"): Promise<T> {
  const target = daemonTargetFrom(values);
  return daemonJson<T>(target, `/api/admin/proxy${path}`, { method });
}

function providersTable(providers: ProviderStatus[]): string {
  if (providers.length === 0) return 'no provider configured; add one under "providers" in agentd.jsonc\n';
  const columns = [
    { header: "NAME" },
    { header: "STATE" },
    { header: "BREAKER" },
    { header: "REQUESTS", align: "right" as const },
    { header: "ERRORS", align: "right" as const },
    { header: "P50 MS", align: "right" as const },
    { header: "QUIRKS", flex: true },
  ];
  const rows = providers.map((p) => [
    p.name,
    p.state,
    p.breaker.state,
    String(p.requests),
    String(p.errors),
    p.p50_ms === null ? "-" : String(p.p50_ms),
    p.quirks.join(", ") || "-",
  ]);
  return `${renderTextTable(columns, rows, WIDTH, 0).join("\n")}\n`;
}

function quirksTable(quirks: StoredQuirk[]): string {
  if (quirks.length === 0) return "no quirks learned\n";
  const columns = [{ header: "PROVIDER" }, { header: "PARAMETER" }, { header: "EXPIRES" }, { header: "WHY", flex: true }];
  const rows = quirks.map((q) => [q.provider, q.param, new Date(q.expires_at).toISOString(), q.detail]);
  return `${renderTextTable(columns, rows, WIDTH, 0).join("\n")}\n`;
}

export const providersCommand: Command = {
  path: ["providers"],
  summary: "List the proxy's providers (state, breaker, requests), or the quirks it learned about them.",
  usage: "agentd providers [list | quirks [--clear] [--provider NAME]] [--json] [--url URL]",
  options: {
    json: { type: "boolean" },
    clear: { type: "boolean" },
    provider: { type: "string" },
    ...DAEMON_OPTIONS,
  },
  allowPositionals: true,
  help: [
    "      --clear           with quirks: forget learned quirks (all, or --provider's)",
    "      --provider NAME   with quirks --clear: only this provider's",
    "      --json            print JSON",
    "      --url URL         agentd to ask (default: the local daemon; the admin routes answer loopback only)",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values, positionals }) {
    const [action = "list", ...extra] = positionals;
    if (extra.length > 0 || (action !== "list" && action !== "quirks"))
      throw new UsageError(`unexpected argument "${positionals.join(" ")}": expected list or quirks`);
    if (action === "list" && (values.clear || values.provider))
      throw new UsageError("--clear and --provider only apply to 'agentd providers quirks'");
    if (action === "list") {
      const { providers } = await adminCall<{ providers: ProviderStatus[] }>(values, "/providers");
      process.stdout.write(values.json ? `${JSON.stringify(providers)}\n` : providersTable(providers));
      return 0;
    }
    if (values.clear) {
      const query = values.provider ? `?provider=${encodeURIComponent(values.provider as string)}` : "";
      const result = await adminCall<{ cleared: number }>(values, `/quirks${query}`, "DELETE");
      process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `cleared ${result.cleared} quirk(s)\n`);
      return 0;
    }
    const { quirks } = await adminCall<{ quirks: StoredQuirk[] }>(values, "/quirks");
    process.stdout.write(values.json ? `${JSON.stringify(quirks)}\n` : quirksTable(quirks));
    return 0;
  },
};
