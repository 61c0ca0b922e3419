/**
 * Actions under way, at most one per incident: a restart, a command, a model call, an alert's
 * webhook. They run outside the decision queue; the incident counts as busy until the action's
 * outcome has been decided (back under the queue), and signals for it meanwhile only join it.
 */
export class ActionJobs {
  readonly #running = new Map<number, Promise<void>>();

  constructor(private readonly onError: (incidentId: number, error: unknown) => void) {}

  busy(incidentId: number): boolean {
    return this.#running.has(incidentId);
  }

  /** The incident's action under way, up to the end of what its outcome starts. */
  running(incidentId: number): Promise<void> | undefined {
    return this.#running.get(incidentId);
  }

  get size(): number {
    return this.#running.size;
  }

  all(): Promise<void>[] {
    return [...this.#running.values()];
  }

  /**
   * Starts `work` and hands its result to `outcome`, which queues the decision about it. A
   * decision that starts the next action of the same incident (an escalation) takes over its slot.
   */
  launch<T>(incidentId: number, work: () => Promise<T>, outcome: (result: T) => Promise<void>): Promise<void> {
    const job: Promise<void> = work()
      .then(outcome)
      .catch((error: unknown) => this.onError(incidentId, error))
      .finally(() => {
        if (this.#running.get(incidentId) === job) this.#running.delete(incidentId);
      });
    this.#running.set(incidentId, job);
    return job;
  }
}
