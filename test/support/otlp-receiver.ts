/**
 * A real OTLP/HTTP receiver for tests: `POST /v1/traces`, `/v1/metrics` and `/v1/logs` in
 * `http/protobuf` (decoded by protobufjs with the messages of ./otlp-wire.ts)
 * and `http/json`, kept as plain spans, metrics and log records. Each request's content type is
 * recorded, so a test can tell which encoding arrived.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type protobuf from 'protobufjs';
import { OTLP_REQUESTS } from './otlp-wire.js';

export type Value = string | number | boolean | Value[] | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, Value>;
  status: { code: number; message?: string };
  resource: Record<string, Value>;
}

export interface ReceivedMetric {
  name: string;
  unit: string;
  points: Array<{ attributes: Record<string, Value>; count?: number; sum?: number; value?: number }>;
}

export interface ReceivedLog {
  traceId: string;
  spanId: string;
  eventName: string;
  body: Value;
  attributes: Record<string, Value>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  metrics: ReceivedMetric[];
  logs: ReceivedLog[];
  /** The content type of every export received, by path. */
  contentTypes: Array<{ path: string; contentType: string }>;
  /** Every request body as received (to scan for what must never be exported). */
  raw: Buffer[];
  /** Resolves once `check` holds of what arrived (polled), or rejects after `timeoutMs`. */
  until<T>(check: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const types: Record<string, protobuf.Type> = OTLP_REQUESTS;
  const got: Pick<OtlpReceiver, 'spans' | 'metrics' | 'logs' | 'contentTypes' | 'raw'> = { spans: [], metrics: [], logs: [], contentTypes: [], raw: [] };

  const server = createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const type = types[path];
    if (req.method !== 'POST' || !type) return void res.writeHead(404).end();
    let body = await readAll(req);
    if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
    got.raw.push(body);
    const contentType = String(req.headers['content-type'] ?? '');
    got.contentTypes.push({ path, contentType });
    let message: any;
    if (contentType.includes('application/x-protobuf')) {
      message = type.toObject(type.decode(body), { longs: Number, bytes: String, defaults: false });
      hexIds(message);
    } else {
      message = JSON.parse(body.toString('utf8'));
    }
    collect(path, message, got);
    res.writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' });
    res.end(contentType.includes('json') ? '{}' : undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ...got,
    async until(check, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = check();
        if (v) return v;
        if (Date.now() > deadline) throw new Error('the OTLP receiver did not get what was expected in time');
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** protobufjs gives bytes as base64; OTLP JSON gives trace and span ids as hex. */
function hexIds(node: any): void {
  if (!node || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node)) {
    if ((k === 'traceId' || k === 'spanId' || k === 'parentSpanId') && typeof v === 'string') node[k] = Buffer.from(v, 'base64').toString('hex');
    else hexIds(v);
  }
}

function anyValue(v: any): Value {
  if (!v) return null;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(anyValue);
  if ('kvlistValue' in v) return JSON.stringify(attributes(v.kvlistValue.values));
  return null;
}

function attributes(list: any[] | undefined): Record<string, Value> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, anyValue(a.value)]));
}

function collect(path: string, message: any, got: Pick<OtlpReceiver, 'spans' | 'metrics' | 'logs'>): void {
  if (path === '/v1/traces') {
    for (const rs of message.resourceSpans ?? []) {
      const resource = attributes(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          got.spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: Number(s.kind ?? 0),
            attributes: attributes(s.attributes),
            status: { code: Number(s.status?.code ?? 0), message: s.status?.message },
            resource,
          });
        }
      }
    }
  } else if (path === '/v1/metrics') {
    for (const rm of message.resourceMetrics ?? []) {
      for (const sm of rm.scopeMetrics ?? []) {
        for (const m of sm.metrics ?? []) {
          const data = m.histogram ?? m.sum ?? m.gauge ?? m.exponentialHistogram;
          const points = (data?.dataPoints ?? []).map((p: any) => ({
            attributes: attributes(p.attributes),
            count: p.count !== undefined ? Number(p.count) : undefined,
            sum: p.sum !== undefined ? Number(p.sum) : undefined,
            value: p.asInt !== undefined ? Number(p.asInt) : p.asDouble !== undefined ? Number(p.asDouble) : undefined,
          }));
          got.metrics.push({ name: m.name, unit: m.unit ?? '', points });
        }
      }
    }
  } else {
    for (const rl of message.resourceLogs ?? []) {
      for (const sl of rl.scopeLogs ?? []) {
        for (const l of sl.logRecords ?? []) {
          got.logs.push({ traceId: l.traceId ?? '', spanId: l.spanId ?? '', eventName: l.eventName ?? '', body: anyValue(l.body), attributes: attributes(l.attributes) });
        }
      }
    }
  }
}
