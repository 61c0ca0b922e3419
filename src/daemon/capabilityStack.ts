import type { Capability } from "../core/capability.ts";

/**
 * The worker's capabilities in start order. A capability that throws while starting leaves the
 * ones already started to close, newest first (so nothing holds a port, a PTY or a tunnel); a
 * normal stop closes them the same way.
 */
export class CapabilityStack {
  readonly started: Capability[] = [];
  readonly #stack = new AsyncDisposableStack();

  start<C extends Capability>(create: () => C): C {
    const capability = create();
    this.started.push(capability);
    this.#stack.defer(() => capability.close());
    return capability;
  }

  /** Builds with `compose`; when it throws, closes what it had started and rethrows. */
  static async compose<T>(compose: (stack: CapabilityStack) => T | Promise<T>): Promise<{ stack: CapabilityStack; value: T }> {
    const stack = new CapabilityStack();
    try {
      return { stack, value: await compose(stack) };
    } catch (error) {
      await stack.close().catch((closeError: unknown) => {
        throw new AggregateError([error, closeError], "A capability failed to start, and closing the started ones failed too");
      });
      throw error;
    }
  }

  close(): Promise<void> {
    return this.#stack.disposeAsync();
  }
}
