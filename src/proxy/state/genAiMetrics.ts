import { GEN_AI_BUCKETS, HistogramFamily, type Labels, type MetricFamily } from "../../core/metrics/index.ts";
import { mapEntry, newMap } from "../../core/collections/index.ts";

/** What the proxy did for a client, as the GenAI conventions name the operation. */
export type GenAiOperation = "chat" | "embeddings" | "text_completion";

/** The label sets of one operation, provider and model, built once. */
interface SeriesLabels {
  input: Labels;
  output: Labels;
  operation: Labels;
  failed: Map<string, Labels>;
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
  /** By operation, provider and model: found without building a key per request. */
  readonly #labels = new Map<GenAiOperation, Map<string, Map<string, SeriesLabels>>>();

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

  families(): MetricFamily[] {
    return [this.tokens.family(), this.duration.family(), this.ttft.family()];
  }

  #labelsFor(operation: GenAiOperation, provider: string, model: string): SeriesLabels {
    const byModel = mapEntry(
      mapEntry(this.#labels, operation, newMap<string, Map<string, SeriesLabels>>),
      provider,
      newMap<string, SeriesLabels>,
    );
    let labels = byModel.get(model);
    if (labels) return labels;
    const base = { gen_ai_operation_name: operation, gen_ai_provider_name: provider, gen_ai_request_model: model };
    labels = {
      input: { ...base, gen_ai_token_type: "input" },
      output: { ...base, gen_ai_token_type: "output" },
      operation: base,
      failed: new Map(),
    };
    byModel.set(model, labels);
    return labels;
  }

  /** error.type values are the proxy's own (a status class or a failure kind), so they stay few. */
  #failed(labels: SeriesLabels, errorType: string): Labels {
    let failed = labels.failed.get(errorType);
    if (!failed) {
      failed = { ...labels.operation, error_type: errorType };
      labels.failed.set(errorType, failed);
    }
    return failed;
  }
}
