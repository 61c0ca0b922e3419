/**
 * An OTLP/HTTP trace receiver for tests: a Bun.serve on loopback taking `POST /v1/traces` in either
 * OTLP encoding, as a collector does: binary protobuf (decoded by protobufjs against
 * opentelemetry-proto's own .proto files, kept in ./proto) or JSON (decoded per the proto's JSON
 * mapping). Both become the same flat spans; `encodings` counts which one each export used.
 */
import { join } from "node:path";
import protobuf from "protobufjs";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** Resource attributes of the process that sent it. */
  resource: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Exports taken, by content type. */
  encodings: { protobuf: number; json: number };
  /** Requests answered with an error (set by `failWith`). */
  refused: number;
  /** Answer every export with this status from now on (0: accept). */
  failWith(status: number): void;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
export type KeyValue = { key: string; value: AnyValue };

function value(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return "";
}

function attributes(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

export type ExportRequest = {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        status?: { code?: number; message?: string };
        startTimeUnixNano?: string;
        endTimeUnixNano?: string;
      }>;
    }>;
  }>;
};

let requestType: protobuf.Type | undefined;

/**
 * A binary ExportTraceServiceRequest as the JSON mapping's object: ids in base64 (hexId reads
 * them), int64 as decimal strings, enums as numbers, defaults left out.
 */
export async function decodeProtobuf(bytes: Uint8Array): Promise<ExportRequest> {
  if (!requestType) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => join(import.meta.dir, "proto", target);
    await root.load("opentelemetry/proto/collector/trace/v1/trace_service.proto", { keepCase: false });
    requestType = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
  }
  return requestType.toObject(requestType.decode(bytes), { longs: String, enums: Number, bytes: String }) as ExportRequest;
}

/** OTLP JSON carries ids as hex; a base64 id (the proto3 default mapping) is turned into hex too. */
export function hexId(id: string | undefined): string | undefined {
  if (!id) return undefined;
  if (/^[0-9a-f]+$/i.test(id) && (id.length === 16 || id.length === 32)) return id.toLowerCase();
  return Buffer.from(id, "base64").toString("hex");
}

export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  let failStatus = 0;
  const receiver: OtlpReceiver = {
    url: "",
    spans,
    encodings: { protobuf: 0, json: 0 },
    refused: 0,
    failWith: (status) => {
      failStatus = status;
    },
    close: async () => {
      await server.stop(true);
    },
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method !== "POST" || path !== "/v1/traces") return new Response("not found", { status: 404 });
      if (failStatus) {
        receiver.refused++;
        return new Response("unavailable", { status: failStatus });
      }
      const type = req.headers.get("content-type") ?? "";
      let body: ExportRequest;
      if (type.startsWith("application/x-protobuf")) {
        receiver.encodings.protobuf++;
        body = await decodeProtobuf(new Uint8Array(await req.arrayBuffer()));
      } else if (type.startsWith("application/json")) {
        receiver.encodings.json++;
        body = (await req.json()) as ExportRequest;
      } else return new Response("expected OTLP protobuf or JSON", { status: 415 });
      for (const rs of body.resourceSpans ?? []) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: hexId(s.traceId)!,
              spanId: hexId(s.spanId)!,
              parentSpanId: hexId(s.parentSpanId),
              name: s.name,
              kind: s.kind,
              attributes: attributes(s.attributes),
              resource,
              status: s.status ?? {},
            });
      }
      return Response.json({});
    },
  });
  receiver.url = `http://127.0.0.1:${server.port}`;
  return receiver;
}
