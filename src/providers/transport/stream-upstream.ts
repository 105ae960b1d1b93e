import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayError, type UpstreamEvent } from '../../ir/index.js';
import { parseSse } from '../../util/sse-parse.js';
import type { ProviderCall } from '../types.js';
import { agentFor } from './agents.js';
import { sendRequest } from './send-request.js';
import { abortedError, mapTransportError } from './map-transport-error.js';
import { defaultRetryOptions, retryDelayMs, type RetryOptions } from './retry-policy.js';
import type { UpstreamExchange } from './types.js';

/**
 * Run one upstream call as an IR stream: POST the body, then decode SSE, or the JSON answer of a
 * non-streamed call (or of an upstream that ignored `stream:true`). Retries with backoff on
 * retryable failures, but only while nothing has been yielded; after the first IR event an error
 * is thrown to the caller.
 */
export async function* streamUpstream<S>(
  call: ProviderCall,
  exchange: UpstreamExchange<S>,
  retry: RetryOptions = defaultRetryOptions,
): AsyncGenerator<UpstreamEvent> {
  const maxRetries = call.target.maxRetries ?? call.target.provider.maxRetries;
  for (let attempt = 0; ; attempt++) {
    let yielded = false;
    try {
      for await (const ev of attemptOnce(call, exchange, attempt)) {
        yielded = true;
        yield ev;
      }
      return;
    } catch (e) {
      const err = mapTransportError(e, call.signal);
      if (yielded || call.signal.aborted) throw err;
      const delay = retryDelayMs(err, attempt, maxRetries, retry);
      if (delay === undefined) throw err;
      try {
        await sleep(delay, undefined, { signal: call.signal });
      } catch {
        throw abortedError(call.signal.reason);
      }
    }
  }
}

/** One try, watched by the call's observer (telemetry) when it has one. */
async function* attemptOnce<S>(call: ProviderCall, ex: UpstreamExchange<S>, resend: number): AsyncGenerator<UpstreamEvent> {
  if (call.signal.aborted) throw abortedError(call.signal.reason);
  const observed = call.observe?.upstream({ method: 'POST', url: ex.url, resend });
  if (!observed) return yield* tryOnce(call, ex);
  let failure: { type: string; message: string } | undefined;
  try {
    yield* tryOnce(call, ex, observed);
  } catch (e) {
    const err = mapTransportError(e, call.signal);
    failure = { type: err.code ?? err.kind, message: err.message };
    throw e;
  } finally {
    // Also when the consumer stopped reading (the ceiling, the client gone).
    observed.end(failure);
  }
}

async function* tryOnce<S>(call: ProviderCall, ex: UpstreamExchange<S>, observed?: ReturnType<NonNullable<ProviderCall['observe']>['upstream']>): AsyncGenerator<UpstreamEvent> {
  const streamed = call.request.stream;
  const body = JSON.stringify(ex.body);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: streamed ? 'text/event-stream' : 'application/json', ...ex.headers };
  if (ex.sign) Object.assign(headers, await ex.sign({ url: ex.url, headers, body }));
  if (observed) Object.assign(headers, observed.headers);
  // Aborting the call closes the upstream's connection at once, before or after its headers.
  const res = await sendRequest(agentFor(call.target.provider), ex.url, {
    method: 'POST',
    headers,
    body,
    signal: call.signal,
    // A non-streamed answer is generated whole before its headers are sent.
    ...(streamed ? {} : { headersTimeout: call.target.provider.timeouts.responseMs }),
  });
  observed?.response(res.statusCode);
  try {
    if (res.statusCode >= 300) {
      const text = await res.body.text();
      throw ex.decodeError({ status: res.statusCode, headers: res.headers, body: parseMaybeJson(text), nowMs: Date.now() });
    }
    const contentType = String(res.headers['content-type'] ?? '');
    if (contentType.includes('application/json')) {
      const body = parseMaybeJson(await res.body.text());
      if (typeof body === 'string') throw new GatewayError('bad_gateway', 'upstream sent a malformed JSON body', { retryable: true });
      yield* ex.decodeResponse(body);
      return;
    }
    let state = ex.initStream();
    let finished = false;
    for await (const sse of (ex.readEvents ?? parseSse)(res.body)) {
      const [next, out] = ex.decodeStream.step(state, sse);
      state = next;
      for (const ev of out) {
        if (ev.type === 'finish') finished = true;
        yield ev;
      }
    }
    for (const ev of ex.decodeStream.end?.(state) ?? []) {
      if (ev.type === 'finish') finished = true;
      yield ev;
    }
    if (!finished) throw new GatewayError('bad_gateway', 'upstream stream ended early', { retryable: true });
  } finally {
    // Consumed bodies are already released to the pool; an abandoned one closes its socket.
    if (!res.body.destroyed) res.body.destroy();
  }
}

function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
