export type HopStep = "connect" | "probe" | "upload" | "start" | "tunnel" | "ready";

/** One step of opening a hop, as the CLI and the tool executor show it. */
export interface HopProgress {
  step: HopStep;
  message: string;
  bytes?: number;
  total?: number;
  elapsed_ms?: number;
}
