import { AgentdError } from "../errors/index.ts";

export type MetricType = "counter" | "gauge" | "histogram";

/** A series' labels: names as the exposition format allows them, values any text (escaped when rendered). */
export type Labels = Readonly<Record<string, string | number>>;

export interface MetricSample {
  /** A histogram's series: `_bucket` (with an `le` label), `_sum` and `_count`; none for a counter or gauge. */
  suffix?: "_bucket" | "_sum" | "_count";
  labels?: Labels;
  value: number;
}

/** One metric family as every capability exposes it and the one renderer writes it. */
export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: MetricSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A family the exposition format cannot carry: a bug in the code that built it, never the client's input. */
export class InvalidMetricFamilyError extends AgentdError {
  constructor(name: string, problem: string) {
    super("internal_error", `metric family ${JSON.stringify(name)}: ${problem}`, { details: { family: name } });
  }
}

/** Throws unless `name` is a valid metric name. */
export function checkMetricName(name: string): void {
  if (!METRIC_NAME.test(name)) throw new InvalidMetricFamilyError(name, "not a valid metric name");
}

/** Throws unless every label name is valid; `__` names are reserved. */
export function checkLabelNames(family: string, labels: Labels): void {
  for (const label in labels)
    if (!LABEL_NAME.test(label) || label.startsWith("__"))
      throw new InvalidMetricFamilyError(family, `${JSON.stringify(label)} is not a valid label name`);
}

/** Throws unless the series fits its family: only a histogram's series have a suffix, and `le` is its buckets' alone. */
export function checkSampleShape(family: MetricFamily, sample: MetricSample): void {
  const histogram = family.type === "histogram";
  if (histogram !== (sample.suffix !== undefined))
    throw new InvalidMetricFamilyError(
      family.name,
      histogram ? "a histogram series needs _bucket, _sum or _count" : "only a histogram's series take a suffix",
    );
  const le = sample.labels !== undefined && "le" in sample.labels;
  if (le !== (sample.suffix === "_bucket"))
    throw new InvalidMetricFamilyError(family.name, le ? "le is reserved for a histogram's buckets" : "a bucket needs its le label");
}
