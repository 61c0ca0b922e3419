import type { ModelMatcher } from "./modelMatcher.ts";

export interface RouteCandidate<P> {
  provider: P;
  name: string;
  priority: number;
  weight: number;
  matcher: ModelMatcher;
  /**
   * Recent decayed error rate in [0, 1], and latency when known: asked only of a candidate that
   * shares its priority with another serving the model, where they weigh the draw.
   */
  health(): Health;
}

interface Health {
  errorRate: number;
  latencyMs: number | undefined;
}

export interface Route<P> {
  provider: P;
  upstreamModel: string;
}

/** Floors keep a struggling provider reachable (so it can show it recovered) without starving others. */
const MIN_HEALTH_FACTOR = 0.05;
const MIN_LATENCY_FACTOR = 0.1;

/**
 * Orders the providers that serve `model`: by priority (highest first), and within one priority by
 * a weighted random draw where weight is scaled by health — lower recent error rate and latency
 * relative to the fastest peer earn more traffic.
 */
export function routeModel<P>(candidates: readonly RouteCandidate<P>[], model: string, random: () => number = Math.random): Route<P>[] {
  const serving: { candidate: RouteCandidate<P>; upstreamModel: string }[] = [];
  for (const candidate of candidates) {
    const upstreamModel = candidate.matcher.resolve(model);
    if (upstreamModel !== undefined) serving.push({ candidate, upstreamModel });
  }
  if (serving.length <= 1) return serving.map((s) => ({ provider: s.candidate.provider, upstreamModel: s.upstreamModel }));
  const byPriority = new Map<number, typeof serving>();
  for (const entry of serving) {
    const group = byPriority.get(entry.candidate.priority);
    if (group) group.push(entry);
    else byPriority.set(entry.candidate.priority, [entry]);
  }
  const routes: Route<P>[] = [];
  for (const priority of [...byPriority.keys()].sort((a, b) => b - a)) {
    const group = byPriority.get(priority)!;
    if (group.length === 1) {
      routes.push({ provider: group[0]!.candidate.provider, upstreamModel: group[0]!.upstreamModel });
      continue;
    }
    const healths = group.map((entry) => entry.candidate.health());
    let fastest = Infinity;
    for (const health of healths) if (health.latencyMs !== undefined) fastest = Math.min(fastest, health.latencyMs);
    const weighted = group.map((entry, i) => ({ entry, weight: effectiveWeight(entry.candidate.weight, healths[i]!, fastest) }));
    for (const { entry } of weightedOrder(weighted, (item) => item.weight, random)) {
      routes.push({ provider: entry.candidate.provider, upstreamModel: entry.upstreamModel });
    }
  }
  return routes;
}

function effectiveWeight(weight: number, health: Health, fastest: number): number {
  const healthFactor = Math.max(MIN_HEALTH_FACTOR, 1 - health.errorRate);
  const latency =
    health.latencyMs === undefined || !Number.isFinite(fastest) ? 1 : Math.max(MIN_LATENCY_FACTOR, fastest / Math.max(health.latencyMs, 1));
  return weight * healthFactor * latency;
}

/** Weighted random permutation (Efraimidis–Spirakis): sort by u^(1/w), so P(first) ∝ w. */
function weightedOrder<T>(items: readonly T[], weightOf: (item: T) => number, random: () => number): T[] {
  return items
    .map((item) => ({ item, key: random() ** (1 / Math.max(weightOf(item), 1e-9)) }))
    .sort((a, b) => b.key - a.key)
    .map((entry) => entry.item);
}
