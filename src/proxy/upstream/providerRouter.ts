import type { ModelMatcher } from "./modelMatcher.ts";

export interface RouteCandidate<P> {
  provider: P;
  name: string;
  priority: number;
  weight: number;
  matcher: ModelMatcher;
  /** Recent decayed error rate in [0, 1]. */
  errorRate: number;
  /** Recent latency, when known. */
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
    for (const entry of weightedOrder(group, (e) => effectiveWeight(e.candidate, group), random)) {
      routes.push({ provider: entry.candidate.provider, upstreamModel: entry.upstreamModel });
    }
  }
  return routes;
}

function effectiveWeight<P>(candidate: RouteCandidate<P>, peers: readonly { candidate: RouteCandidate<P> }[]): number {
  const health = Math.max(MIN_HEALTH_FACTOR, 1 - candidate.errorRate);
  let fastest = Infinity;
  for (const peer of peers) if (peer.candidate.latencyMs !== undefined) fastest = Math.min(fastest, peer.candidate.latencyMs);
  const latency =
    candidate.latencyMs === undefined || !Number.isFinite(fastest)
      ? 1
      : Math.max(MIN_LATENCY_FACTOR, fastest / Math.max(candidate.latencyMs, 1));
  return candidate.weight * health * latency;
}

/** Weighted random permutation (Efraimidis–Spirakis): sort by u^(1/w), so P(first) ∝ w. */
function weightedOrder<T>(items: readonly T[], weightOf: (item: T) => number, random: () => number): T[] {
  return items
    .map((item) => ({ item, key: random() ** (1 / Math.max(weightOf(item), 1e-9)) }))
    .sort((a, b) => b.key - a.key)
    .map((entry) => entry.item);
}
