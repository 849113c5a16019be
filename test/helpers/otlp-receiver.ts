import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the collector received it, from either OTLP encoding. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  serviceName: string;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:PORT`: the OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** The Content-Type of every export received. */
  contentTypes: string[];
  close(): Promise<void>;
}

// ---- a minimal protobuf reader: just the fields of ExportTraceServiceRequest the tests look at ----

type Field = { no: number; wire: number; value: bigint | Buffer };

function* fields(buf: Buffer): Generator<Field> {
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const no = key >> 3;
    const wire = key & 7;
    if (wire === 0) yield { no, wire, value: varint() };
    else if (wire === 1) {
      yield { no, wire, value: buf.subarray(pos, pos + 8) };
      pos += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      yield { no, wire, value: buf.subarray(pos, pos + len) };
      pos += len;
    } else if (wire === 5) {
      yield { no, wire, value: buf.subarray(pos, pos + 4) };
      pos += 4;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
}

function anyValue(buf: Buffer): string | number | boolean {
  for (const f of fields(buf)) {
    if (f.no === 1) return (f.value as Buffer).toString('utf8');
    if (f.no === 2) return (f.value as bigint) !== 0n;
    if (f.no === 3) return Number(f.value as bigint);
    if (f.no === 4) return (f.value as Buffer).readDoubleLE(0);
  }
  return '';
}

function keyValues(list: Buffer[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    let key = '';
    let value: string | number | boolean = '';
    for (const f of fields(kv)) {
      if (f.no === 1) key = (f.value as Buffer).toString('utf8');
      if (f.no === 2) value = anyValue(f.value as Buffer);
    }
    out[key] = value;
  }
  return out;
}

function decodeProtobuf(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of fields(body)) {
    if (rs.no !== 1) continue;
    let serviceName = '';
    const scopeSpans: Buffer[] = [];
    for (const f of fields(rs.value as Buffer)) {
      if (f.no === 1) {
        const attrs: Buffer[] = [];
        for (const r of fields(f.value as Buffer)) if (r.no === 1) attrs.push(r.value as Buffer);
        serviceName = String(keyValues(attrs)['service.name'] ?? '');
      }
      if (f.no === 2) scopeSpans.push(f.value as Buffer);
    }
    for (const ss of scopeSpans) {
      for (const s of fields(ss)) {
        if (s.no !== 2) continue;
        const span: ReceivedSpan = { traceId: '', spanId: '', parentSpanId: '', name: '', kind: 0, attributes: {}, serviceName };
        const attrs: Buffer[] = [];
        for (const f of fields(s.value as Buffer)) {
          if (f.no === 1) span.traceId = (f.value as Buffer).toString('hex');
          if (f.no === 2) span.spanId = (f.value as Buffer).toString('hex');
          if (f.no === 4) span.parentSpanId = (f.value as Buffer).toString('hex');
          if (f.no === 5) span.name = (f.value as Buffer).toString('utf8');
          if (f.no === 6) span.kind = Number(f.value as bigint);
          if (f.no === 9) attrs.push(f.value as Buffer);
        }
        span.attributes = keyValues(attrs);
        spans.push(span);
      }
    }
  }
  return spans;
}

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
type JsonKeyValue = { key: string; value: JsonAnyValue };

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    out[key] = value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? ''));
  }
  return out;
}

function decodeJson(body: Buffer): ReceivedSpan[] {
  const doc = JSON.parse(body.toString('utf8')) as {
    resourceSpans: Array<{
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans: Array<{ spans: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: JsonKeyValue[] }> }>;
    }>;
  };
  return doc.resourceSpans.flatMap((rs) => {
    const serviceName = String(jsonAttributes(rs.resource?.attributes)['service.name'] ?? '');
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind,
        attributes: jsonAttributes(s.attributes),
        serviceName,
      })),
    );
  });
}

/** An OTLP/HTTP trace collector on loopback that keeps what it receives (both encodings). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const type = String(req.headers['content-type'] ?? '');
      contentTypes.push(type);
      const body = Buffer.concat(chunks);
      spans.push(...(type.startsWith('application/json') ? decodeJson(body) : decodeProtobuf(body)));
      res.writeHead(200, { 'content-type': type.startsWith('application/json') ? 'application/json' : 'application/x-protobuf' });
      res.end(type.startsWith('application/json') ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
