import { GEN_AI_BUCKETS, HistogramFamily, labelText } from "../../core/metrics/index.ts";

/** What the proxy did for a client, as the GenAI conventions name the operation. */
export type GenAiOperation = "chat" | "embeddings" | "text_completion";

interface Labels {
  input: string;
  output: string;
  operation: string;
  failed: Map<string, string>;
}

/**
 * The OpenTelemetry GenAI client metrics, mapped to Prometheus names (dots to underscores, the
 * unit as a suffix): token usage, operation duration and time to first token, with the
 * conventions' attribute names and bucket bounds.
 */
export class GenAiMetrics {
  readonly tokens = new HistogramFamily(
    "gen_ai_client_token_usage",
    "Tokens per proxied request, by token type (input, output), provider and requested model (OpenTelemetry gen_ai.client.token.usage).",
    GEN_AI_BUCKETS.tokens,
  );
  readonly duration = new HistogramFamily(
    "gen_ai_client_operation_duration_seconds",
    "Duration of proxied GenAI operations (OpenTelemetry gen_ai.client.operation.duration).",
    GEN_AI_BUCKETS.duration,
  );
  readonly ttft = new HistogramFamily(
    "gen_ai_server_time_to_first_token_seconds",
    "Time to the first streamed token of proxied requests (OpenTelemetry gen_ai.server.time_to_first_token).",
    GEN_AI_BUCKETS.ttft,
  );
  readonly #labels = new Map<string, Labels>();

  record(
    operation: GenAiOperation,
    provider: string,
    model: string,
    seconds: number,
    ttftSeconds: number | undefined,
    tokensIn: number,
    tokensOut: number,
    errorType: string | undefined,
  ): void {
    const labels = this.#labelsFor(operation, provider, model);
    if (errorType === undefined) this.duration.observe(labels.operation, seconds);
    else this.duration.observe(this.#failed(labels, errorType), seconds);
    if (ttftSeconds !== undefined) this.ttft.observe(labels.operation, ttftSeconds);
    if (tokensIn) this.tokens.observe(labels.input, tokensIn);
    if (tokensOut) this.tokens.observe(labels.output, tokensOut);
  }

  text(lines: string[]): void {
    this.tokens.text(lines);
    this.duration.text(lines);
    this.ttft.text(lines);
  }

  #labelsFor(operation: GenAiOperation, provider: string, model: string): Labels {
    const key = `${operation}\u0000${provider}\u0000${model}`;
    let labels = this.#labels.get(key);
    if (labels) return labels;
    const base = { gen_ai_operation_name: operation, gen_ai_provider_name: provider, gen_ai_request_model: model };
    labels = {
      input: labelText({ ...base, gen_ai_token_type: "input" }),
      output: labelText({ ...base, gen_ai_token_type: "output" }),
      operation: labelText(base),
      failed: new Map(),
    };
    this.#labels.set(key, labels);
    return labels;
  }

  /** error.type values are the proxy's own (a status class or a failure kind), so they stay few. */
  #failed(labels: Labels, errorType: string): string {
    let text = labels.failed.get(errorType);
    if (!text) {
      text = `${labels.operation},${labelText({ error_type: errorType })}`;
      labels.failed.set(errorType, text);
    }
    return text;
  }
}
