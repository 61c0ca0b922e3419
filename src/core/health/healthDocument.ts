import { worstStatus, type HealthCheck, type HealthSource, type HealthStatus } from "./healthCheck.ts";

/** application/health+json, per draft-inadarei-api-health-check, plus agentd's own totals. */
export interface HealthDocument {
  status: HealthStatus;
  version: string;
  serviceId: string;
  description: string;
  checks: Record<string, Array<Omit<HealthCheck, "key">>>;
  notes: string[];
  uptime_s: number;
  memory_mb: number;
  requests_total: number;
}

export interface HealthDocumentInput {
  version: string;
  checks: HealthCheck[];
  notes: string[];
  uptimeS: number;
  memoryMb: number;
  requestsTotal: number;
}

export function buildHealthDocument(input: HealthDocumentInput): HealthDocument {
  const checks: HealthDocument["checks"] = {};
  for (const { key, ...rest } of input.checks) {
    let list = checks[key];
    if (list == null) {
      list = [];
      checks[key] = list;
    }
    list.push(rest);
  }
  return {
    status: worstStatus(input.checks.map((check) => check.status)),
    version: input.version,
    serviceId: "agentd",
    description: "agentd worker health",
    checks,
    notes: input.notes,
    uptime_s: Math.round(input.uptimeS),
    memory_mb: Math.round(input.memoryMb * 10) / 10,
    requests_total: input.requestsTotal,
  };
}

/** Runs every source; a source that throws becomes a failing check instead of failing /health. */
export async function collectChecks(sources: Record<string, HealthSource>): Promise<HealthCheck[]> {
  const time = new Date().toISOString();
  const results = await Promise.all(
    Object.entries(sources).map(async ([name, source]) => {
      try {
        return (await source()).map((check) => ({ time, ...check }));
      } catch (error) {
        return [
          { key: `${name}:check`, status: "fail" as const, output: `Cannot run the ${name} check: ${(error as Error).message}`, time },
        ];
      }
    }),
  );
  return results.flat();
}
