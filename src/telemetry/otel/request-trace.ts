import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { SeverityNumber, type Logger } from '@opentelemetry/api-logs';
import type { Scrubber } from '../../util/redact.js';
import { attributeFilter, presentedKey } from '../safe-attributes.js';
import type { AttemptEnd, AttemptStart, AttemptTrace, Attributes, RequestEnd, RequestTrace, SpanScope, UpstreamTry, UsageExport } from '../types.js';
import type { GenAiMetrics } from './genai-metrics.js';

export interface TraceTools {
  tracer: Tracer;
  logger: Logger;
  metrics: GenAiMetrics;
  scrubber: Scrubber;
  captureContent: boolean;
}

type Filter = ReturnType<typeof attributeFilter>;

/** A span whose attributes and error messages go through the request's filter. */
class FilteredSpan implements SpanScope {
  constructor(
    readonly span: Span,
    protected readonly filter: Filter,
  ) {}
  set(attrs: Attributes): void {
    this.span.setAttributes(this.filter(attrs));
  }
  fail(errorType: string, message?: string): void {
    const clean = this.filter({ type: errorType, message });
    this.span.setAttribute('error.type', clean.type as string);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: clean.message as string | undefined });
  }
  end(): void {
    this.span.end();
  }
}

const seconds = (fromMs: number) => (performance.now() - fromMs) / 1000;

/** The server span of one request and everything made under it. */
export class OtelRequestTrace extends FilteredSpan implements RequestTrace {
  private readonly ctx: Context;
  private readonly started = performance.now();
  private firstTokenAt?: number;

  constructor(
    private readonly tools: TraceTools,
    private readonly method: string,
    headers: Record<string, string | string[] | undefined>,
  ) {
    const filter = attributeFilter(tools.scrubber, presentedKey(headers));
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const span = tools.tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
    super(span, filter);
    this.ctx = trace.setSpan(parent, span);
  }

  get captureContent(): boolean {
    return this.tools.captureContent;
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }
  get spanId(): string {
    return this.span.spanContext().spanId;
  }

  route(route: string): void {
    this.span.updateName(`${this.method} ${route}`);
    this.span.setAttribute('http.route', route);
  }

  child(name: string, attrs: Attributes = {}): SpanScope {
    return new FilteredSpan(this.tools.tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: this.filter(attrs) }, this.ctx), this.filter);
  }

  attempt(facts: AttemptStart): AttemptTrace {
    const attrs: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': facts.provider,
      'gen_ai.request.model': facts.upstreamModel,
      'gen_ai.request.stream': facts.stream,
      'switchyard.model': facts.model,
      'switchyard.deployment.id': facts.deployment,
      'switchyard.attempt.index': facts.index,
      ...facts.request,
    };
    if (facts.content) {
      attrs['gen_ai.input.messages'] = JSON.stringify(facts.content.input);
      if (facts.content.system !== undefined) attrs['gen_ai.system_instructions'] = JSON.stringify(facts.content.system);
    }
    const span = this.tools.tracer.startSpan(`chat ${facts.upstreamModel}`, { kind: SpanKind.CLIENT, attributes: this.filter(attrs) }, this.ctx);
    return new OtelAttempt(this.tools, span, trace.setSpan(this.ctx, span), this.filter, facts);
  }

  firstToken(): void {
    this.firstTokenAt ??= performance.now();
  }

  finish(status: number, facts: RequestEnd): void {
    this.span.setAttribute('http.response.status_code', status);
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    if (status >= 400 || facts.errorType) this.span.setAttribute('error.type', facts.errorType ?? String(status));
    this.span.end();
    if (!facts.operation) return;
    const attrs = this.filter({
      'gen_ai.operation.name': facts.operation,
      'gen_ai.provider.name': facts.provider,
      'gen_ai.request.model': facts.requestModel,
      'gen_ai.response.model': facts.responseModel,
      'error.type': status >= 400 ? (facts.errorType ?? String(status)) : undefined,
    });
    const m = this.tools.metrics;
    m.serverRequestDuration.record(seconds(this.started), attrs);
    if (status < 400 && this.firstTokenAt !== undefined) {
      m.serverTimeToFirstToken.record((this.firstTokenAt - this.started) / 1000, attrs);
      const tokens = facts.outputTokens ?? 0;
      if (tokens > 1) m.serverTimePerOutputToken.record(seconds(this.firstTokenAt) / (tokens - 1), attrs);
    }
  }

  log(line: Record<string, unknown>): void {
    const attributes: Attributes = {};
    for (const [k, v] of Object.entries(line)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') attributes[k] = v;
    this.tools.logger.emit({ severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: 'request', attributes: this.filter(attributes), context: this.ctx });
  }

  usage(r: UsageExport): void {
    const attributes = this.filter({
      'switchyard.request.id': r.requestId,
      'switchyard.account.id': r.accountId,
      'switchyard.key.id': r.keyId ?? undefined,
      'switchyard.user.id': r.userId ?? undefined,
      'enduser.id': r.endUser ?? undefined,
      'gen_ai.conversation.id': r.session ?? undefined,
      'gen_ai.request.model': r.modelRequested,
      'gen_ai.response.model': r.modelServed ?? undefined,
      'switchyard.deployments': r.deployments,
      'switchyard.status': r.status,
      'switchyard.fallback': r.fallback,
      'switchyard.attempts': r.attempts,
      'gen_ai.usage.input_tokens': r.usage.input,
      'gen_ai.usage.output_tokens': r.usage.output,
      'gen_ai.usage.cache_read.input_tokens': r.usage.cacheRead,
      'gen_ai.usage.cache_creation.input_tokens': r.usage.cacheWrite,
      'gen_ai.usage.reasoning.output_tokens': r.usage.reasoning,
      'switchyard.cost.nanodollars': r.cost,
      'switchyard.latency_ms': r.latencyMs,
    });
    this.tools.logger.emit({ eventName: 'switchyard.usage', severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: 'usage', attributes, context: this.ctx });
  }
}

/** One attempt's GenAI client span, its upstream tries, and the client metrics. */
class OtelAttempt implements AttemptTrace {
  private readonly started = performance.now();
  private firstChunkAt?: number;

  constructor(
    private readonly tools: TraceTools,
    private readonly span: Span,
    private readonly ctx: Context,
    private readonly filter: Filter,
    private readonly facts: AttemptStart,
  ) {}

  firstChunk(): void {
    if (this.firstChunkAt !== undefined) return;
    this.firstChunkAt = performance.now();
    if (this.facts.stream) this.span.setAttribute('gen_ai.response.time_to_first_chunk', seconds(this.started));
  }

  upstream(info: { method: string; url: string; resend: number }): UpstreamTry {
    const url = new URL(info.url);
    const attrs = this.filter({
      'http.request.method': info.method,
      // Without the query: some upstreams take a key there.
      'url.full': `${url.protocol}//${url.host}${url.pathname}`,
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      'http.request.resend_count': info.resend > 0 ? info.resend : undefined,
    });
    const span = this.tools.tracer.startSpan(info.method, { kind: SpanKind.CLIENT, attributes: attrs }, this.ctx);
    const headers: Record<string, string> = {};
    propagation.inject(trace.setSpan(this.ctx, span), headers);
    const filter = this.filter;
    return {
      headers,
      response: (status) => {
        span.setAttribute('http.response.status_code', status);
        if (status >= 400) span.setAttribute('error.type', String(status));
      },
      end: (error) => {
        if (error) {
          const clean = filter({ type: error.type, message: error.message });
          span.setAttribute('error.type', clean.type as string);
          span.setStatus({ code: SpanStatusCode.ERROR, message: clean.message as string });
        }
        span.end();
      },
    };
  }

  end(f: AttemptEnd): void {
    const u = f.usage;
    const attrs: Attributes = {
      'switchyard.attempt.outcome': f.outcome,
      'gen_ai.response.model': this.facts.upstreamModel,
      'gen_ai.response.id': f.responseId,
      'gen_ai.response.finish_reasons': f.finishReasons,
      'gen_ai.usage.input_tokens': u?.input,
      'gen_ai.usage.output_tokens': u?.output,
      'gen_ai.usage.cache_read.input_tokens': u?.cacheRead || undefined,
      'gen_ai.usage.cache_creation.input_tokens': u?.cacheWrite || undefined,
      'gen_ai.usage.reasoning.output_tokens': u?.reasoning || undefined,
    };
    if (f.output !== undefined) attrs['gen_ai.output.messages'] = JSON.stringify(f.output);
    this.span.setAttributes(this.filter(attrs));
    if (f.errorType) {
      const clean = this.filter({ type: f.errorType, message: f.errorMessage });
      this.span.setAttribute('error.type', clean.type as string);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: clean.message as string | undefined });
    }
    this.span.end();
    const metricAttrs = this.filter({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': this.facts.provider,
      'gen_ai.request.model': this.facts.upstreamModel,
      'gen_ai.response.model': this.facts.upstreamModel,
      'error.type': f.errorType,
    });
    const m = this.tools.metrics;
    m.operationDuration.record(seconds(this.started), metricAttrs);
    if (this.facts.stream && this.firstChunkAt !== undefined) m.timeToFirstChunk.record((this.firstChunkAt - this.started) / 1000, metricAttrs);
    if (u) {
      m.tokenUsage.record(u.input, { ...metricAttrs, 'gen_ai.token.type': 'input' });
      m.tokenUsage.record(u.output, { ...metricAttrs, 'gen_ai.token.type': 'output' });
    }
  }
}
