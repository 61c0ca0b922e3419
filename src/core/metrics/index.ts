export { renderPrometheus } from "./prometheusText.ts";
export type { MetricFamily, MetricSample, MetricType } from "./prometheusText.ts";
export { CounterFamily, familiesText, GEN_AI_BUCKETS, HistogramFamily, labelText } from "./metricFamilies.ts";
export { agentdFamilies, buildFacts, maxOpenFiles, processFacts, processFamilies } from "./processMetrics.ts";
export type { BuildFacts, ProcessFacts } from "./processMetrics.ts";
