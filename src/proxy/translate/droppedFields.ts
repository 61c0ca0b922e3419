/**
 * The fields a translation left out, in the order met, each once. Names are fixed by the
 * translators (`seed`, `text.verbosity`, `tools.web_search`, `input.reasoning`), never taken from
 * the client, so they can label a metric.
 */
export function noteDropped(dropped: string[], field: string): void {
  if (!dropped.includes(field)) dropped.push(field);
}
