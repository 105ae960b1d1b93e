/**
 * The part of the OTLP protobuf messages the test receiver reads (traces, metrics, logs), described
 * for protobufjs from the protocol's documented field numbers (opentelemetry-proto, `common`,
 * `resource`, `trace`, `metrics` and `logs` v1). Fields left out are skipped by the decoder, as
 * protobuf readers skip fields they do not know; enums are read as their numbers.
 */
import protobuf from 'protobufjs';

type Fields = Record<string, { type: string; id: number; rule?: 'repeated' }>;
const many = (type: string, id: number) => ({ type, id, rule: 'repeated' as const });
const message = (fields: Fields) => ({ fields });
const attributes = (id: number) => ({ attributes: many('KeyValue', id) });

const descriptor = {
  nested: {
    AnyValue: message({
      stringValue: { type: 'string', id: 1 },
      boolValue: { type: 'bool', id: 2 },
      intValue: { type: 'int64', id: 3 },
      doubleValue: { type: 'double', id: 4 },
      arrayValue: { type: 'ArrayValue', id: 5 },
      kvlistValue: { type: 'KeyValueList', id: 6 },
    }),
    ArrayValue: message({ values: many('AnyValue', 1) }),
    KeyValueList: message({ values: many('KeyValue', 1) }),
    KeyValue: message({ key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } }),
    Resource: message(attributes(1)),

    ExportTraceServiceRequest: message({ resourceSpans: many('ResourceSpans', 1) }),
    ResourceSpans: message({ resource: { type: 'Resource', id: 1 }, scopeSpans: many('ScopeSpans', 2) }),
    ScopeSpans: message({ spans: many('Span', 2) }),
    Span: message({
      traceId: { type: 'bytes', id: 1 },
      spanId: { type: 'bytes', id: 2 },
      parentSpanId: { type: 'bytes', id: 4 },
      name: { type: 'string', id: 5 },
      kind: { type: 'int32', id: 6 },
      ...attributes(9),
      status: { type: 'Status', id: 15 },
    }),
    Status: message({ message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } }),

    ExportMetricsServiceRequest: message({ resourceMetrics: many('ResourceMetrics', 1) }),
    ResourceMetrics: message({ resource: { type: 'Resource', id: 1 }, scopeMetrics: many('ScopeMetrics', 2) }),
    ScopeMetrics: message({ metrics: many('Metric', 2) }),
    Metric: message({
      name: { type: 'string', id: 1 },
      unit: { type: 'string', id: 3 },
      gauge: { type: 'NumberPoints', id: 5 },
      sum: { type: 'NumberPoints', id: 7 },
      histogram: { type: 'HistogramPoints', id: 9 },
      exponentialHistogram: { type: 'ExponentialHistogramPoints', id: 10 },
    }),
    NumberPoints: message({ dataPoints: many('NumberDataPoint', 1) }),
    HistogramPoints: message({ dataPoints: many('HistogramDataPoint', 1) }),
    ExponentialHistogramPoints: message({ dataPoints: many('ExponentialHistogramDataPoint', 1) }),
    NumberDataPoint: message({ ...attributes(7), asDouble: { type: 'double', id: 4 }, asInt: { type: 'sfixed64', id: 6 } }),
    HistogramDataPoint: message({ ...attributes(9), count: { type: 'fixed64', id: 4 }, sum: { type: 'double', id: 5 } }),
    ExponentialHistogramDataPoint: message({ ...attributes(1), count: { type: 'fixed64', id: 4 }, sum: { type: 'double', id: 5 } }),

    ExportLogsServiceRequest: message({ resourceLogs: many('ResourceLogs', 1) }),
    ResourceLogs: message({ resource: { type: 'Resource', id: 1 }, scopeLogs: many('ScopeLogs', 2) }),
    ScopeLogs: message({ logRecords: many('LogRecord', 2) }),
    LogRecord: message({
      body: { type: 'AnyValue', id: 5 },
      ...attributes(6),
      traceId: { type: 'bytes', id: 9 },
      spanId: { type: 'bytes', id: 10 },
      eventName: { type: 'string', id: 12 },
    }),
  },
};

const root = protobuf.Root.fromJSON(descriptor);

/** The request message each OTLP/HTTP path carries. */
export const OTLP_REQUESTS = {
  '/v1/traces': root.lookupType('ExportTraceServiceRequest'),
  '/v1/metrics': root.lookupType('ExportMetricsServiceRequest'),
  '/v1/logs': root.lookupType('ExportLogsServiceRequest'),
} as const;
