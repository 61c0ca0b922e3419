export { renderPrometheus } from "./prometheusText.ts";
export type { MetricFamily, MetricSample, MetricType } from "./prometheusText.ts";
export { CounterFamily, familiesText, GEN_AI_BUCKETS, HistogramFamily, labelText } from "./metricFamilies.ts";
