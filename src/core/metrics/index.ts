export { renderPrometheus } from "./prometheusText.ts";
export type { MetricFamily, MetricSample, MetricType } from "./prometheusText.ts";
