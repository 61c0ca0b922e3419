import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DebugSidecar } from "../../src/agent/debugSidecar.ts";
import { parseSidecar } from "../../src/agent/sidecarRecord.ts";
import { recordingLogger } from "./agentHarness.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sidecarIn(logger = recordingLogger()): DebugSidecar {
  const dir = mkdtempSync(join(tmpdir(), "agentd-sidecar-"));
  dirs.push(dir);
  return new DebugSidecar({
    dir,
    sessionId: "ses_1",
    maxBytes: 1 << 20,
    keep: 1,
    secrets: ["literal-secret-123"],
    logger,
    batchMs: 60_000,
  });
}

describe("debug sidecar", () => {
  test("close() writes every queued record, in order, redacted as it was queued", async () => {
    const sidecar = sidecarIn();
    sidecar.write("model.request", { headers: { authorization: "Bearer abcdefghijkl" }, note: "uses literal-secret-123" });
    sidecar.write("tool.end", { result: "ok", api_key: "k" });
    await sidecar.close();
    const records = parseSidecar(readFileSync(sidecar.path, "utf8"));
    expect(records.map((r) => r.kind)).toEqual(["model.request", "tool.end"]);
    expect(records[0]).toMatchObject({ session: "ses_1", headers: { authorization: "[redacted]" }, note: "uses [redacted]" });
    expect(records[1]).toMatchObject({ result: "ok", api_key: "[redacted]" });
  });

  test("a record that cannot be rendered is logged and left out; the others are written", async () => {
    const logger = recordingLogger();
    const sidecar = sidecarIn(logger);
    sidecar.write("tool.start", { size: 1n });
    sidecar.write("tool.end", { result: "ok" });
    await sidecar.close();
    expect(parseSidecar(readFileSync(sidecar.path, "utf8")).map((r) => r.kind)).toEqual(["tool.end"]);
    expect(logger.entries).toContainEqual(expect.objectContaining({ level: "warn", event: "sidecar.render_failed", kind: "tool.start" }));
  });
});
