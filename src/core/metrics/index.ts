export { renderPrometheus } from "./prometheusText.ts";
export { InvalidMetricFamilyError } from "./metricFamily.ts";
export type { Labels, MetricFamily, MetricSample, MetricType } from "./metricFamily.ts";
export { CounterFamily, GaugeFamily, GEN_AI_BUCKETS, HistogramFamily } from "./metricFamilies.ts";
export { agentdFamilies, buildFacts, maxOpenFiles, processFacts, processFamilies } from "./processMetrics.ts";
export type { BuildFacts, ProcessFacts } from "./processMetrics.ts";
