/**
 * Providers switched away from for one model for a while (the watchdog's answer to a model whose
 * tool calls keep failing there): its requests go to the other providers first. The provider
 * stays last in line, so a switch never turns answers into 503s, and its other models are
 * untouched. Time is passed in.
 */
export class ModelSwitches {
  /** Until when (epoch ms), by provider and then model. */
  readonly #until = new Map<string, Map<string, number>>();

  switchAway(provider: string, model: string, durationMs: number, now: number): number {
    let byModel = this.#until.get(provider);
    if (!byModel) {
      byModel = new Map();
      this.#until.set(provider, byModel);
    }
    const until = now + durationMs;
    byModel.set(model, until);
    return until;
  }

  /** Routes in the order to try them, those switched away from for `model` moved last (in their order). */
  order<R extends { provider: { name: string } }>(routes: R[], model: string, now: number): R[] {
    if (this.#until.size === 0 || routes.length < 2) return routes;
    const kept: R[] = [];
    const away: R[] = [];
    for (const route of routes) (this.#isAway(route.provider.name, model, now) ? away : kept).push(route);
    return away.length === 0 ? routes : [...kept, ...away];
  }

  #isAway(provider: string, model: string, now: number): boolean {
    const byModel = this.#until.get(provider);
    const until = byModel?.get(model);
    if (until === undefined) return false;
    if (until > now) return true;
    // Expired: forgotten, so the map holds only switches in force and the fast path comes back.
    byModel!.delete(model);
    if (byModel!.size === 0) this.#until.delete(provider);
    return false;
  }
}
