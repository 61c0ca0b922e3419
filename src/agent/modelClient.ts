import type OpenAI from "openai";
import type { ClientOptions } from "openai";

/** The agent's model client, as a promise: the SDK is loaded when the first turn asks the model. */
export type ModelClient = () => Promise<OpenAI>;

/**
 * Makes the client at its first use, once: an idle worker (a proxy that never runs a turn) does not
 * hold the SDK's modules (bench/startup.ts measures it). A failed load is not kept, so the next turn retries.
 */
export function lazyModelClient(options: ClientOptions): ModelClient {
  let client: Promise<OpenAI> | undefined;
  return () => {
    client ??= import("openai").then(
      ({ default: OpenAIClient }) => new OpenAIClient(options),
      (error: unknown) => {
        client = undefined;
        throw error;
      },
    );
    return client;
  };
}
