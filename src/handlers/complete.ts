import { Collector, nanosToUsd, toGatewayError, type Response, type StreamEvent } from '../ir/index.js';
import { startRun, type Run } from '../pipeline/run-completion.js';
import type { PipelineDeps, RunSummary } from '../pipeline/types.js';
import type { EncodeMeta, ProtocolAdapter, SseFrame } from '../protocols/types.js';
import type { HandlerInput, HandlerResult } from './types.js';

/**
 * One handler serves every completion protocol: decode, run the pipeline, encode. The protocol
 * adapter is the only thing that differs between /v1/chat/completions, /v1/messages and
 * /v1/responses.
 */
export async function handleCompletion(deps: PipelineDeps, input: HandlerInput): Promise<HandlerResult> {
  const protocol = input.protocol;
  const req = protocol.decodeRequest(input.body, input.headers);
  const { accountId, keyId, user, limits, allowedModels, budgets } = input.auth!;
  if (input.completion) Object.assign(input.completion, { model: req.model, stream: req.stream });
  const run = await startRun(deps, { requestId: input.requestId, accountId, keyId, userId: user?.id, budgets, limits, allowedModels, signal: input.signal, trace: input.trace }, req);
  if (input.completion) input.completion.run = run.summary;
  const meta: EncodeMeta = {
    requestId: input.requestId,
    created: Math.floor(deps.now() / 1000),
    requestedModel: req.model,
    inputTokensEstimate: run.summary.inputTokens,
    includeUsage: req.includeUsage ?? false,
    request: req,
  };
  if (!req.stream) return collect(run, protocol, meta, deps);

  // Pull the first event before answering, so a failure of the first attempt (or of every
  // candidate) is still an HTTP error with the right status, not a 200 stream.
  const first = await run.events.next();
  const close = async () => void (await run.events.return(undefined));
  try {
    // Known once the first attempt answered (encoders that report it read it from meta).
    meta.servedVariant = run.summary.servedVariant;
    return { kind: 'sse', frames: encodeStream(protocol, meta, first, run), headers: answerHeaders(run.summary, protocol, deps.now()), close };
  } catch (e) {
    await close();
    throw e;
  }
}

async function collect(run: Run, protocol: ProtocolAdapter<any>, meta: EncodeMeta, deps: PipelineDeps): Promise<HandlerResult> {
  const collector = new Collector();
  for await (const ev of run.events) collector.push(ev);
  const res: Response = {
    id: collector.id || meta.requestId,
    model: collector.model || run.summary.servedModel || meta.requestedModel,
    content: collector.content,
    finish: collector.finish,
    usage: collector.usage,
    ...(collector.cost !== undefined ? { cost: collector.cost } : {}),
    attempts: run.summary.attempts,
    servedVariant: run.summary.servedVariant,
    created: Math.floor(deps.now() / 1000),
  };
  const headers = answerHeaders(run.summary, protocol, deps.now());
  // The cost of a whole answer in a header too (USD, as usage.cost), for clients that read no body fields.
  if (res.cost !== undefined) headers['x-switchyard-cost'] = nanosToUsd(res.cost);
  return { kind: 'json', status: 200, body: protocol.encodeResponse(res, meta), headers };
}

async function* encodeStream(
  protocol: ProtocolAdapter<any>,
  meta: EncodeMeta,
  first: IteratorResult<StreamEvent>,
  run: Run,
): AsyncGenerator<SseFrame> {
  let state = protocol.initStream(meta);
  const emit = (ev: StreamEvent): SseFrame[] => {
    const [next, frames] = protocol.stream.step(state, ev);
    state = next;
    return frames;
  };
  try {
    if (!first.done) {
      yield* emit(first.value);
      for await (const ev of run.events) yield* emit(ev);
    }
  } catch (e) {
    // After the first byte an error can only travel inside the stream.
    // The run has ended (its generator's finally ran): its attempts are complete, the failed one
    // included, as x-switchyard-attempts and the usage record have them.
    yield* emit({ type: 'error', error: toGatewayError(e, meta.requestId), attempts: [...run.summary.attempts] });
  } finally {
    await run.events.return(undefined);
  }
  if (protocol.stream.end) yield* protocol.stream.end(state);
}

/** Longest `x-switchyard-warnings` value: warnings quote request text, and proxies cap headers. */
const MAX_WARNINGS_HEADER = 2000;

/**
 * The headers of an answer: the hops so far, for both protocols (`x-switchyard-attempts:
 * model=outcome, ...`, the deployment id `model/name` in place of the model when the model has
 * several deployments), and the key's rate limits in the protocol's own headers.
 */
function answerHeaders(summary: RunSummary, protocol: ProtocolAdapter<any>, nowMs: number): Record<string, string> {
  const headers: Record<string, string> = summary.rateLimit ? protocol.rateLimitHeaders(summary.rateLimit, nowMs) : {};
  if (summary.attempts.length > 0) {
    headers['x-switchyard-attempts'] = summary.attempts.map((a) => `${a.deployment ?? a.model}=${a.outcome}`).join(', ');
  }
  if (summary.servedModel) headers['x-switchyard-model'] = summary.servedModel;
  if (summary.servedVariant) headers['x-switchyard-variant'] = summary.servedVariant;
  if (summary.warnings?.length) headers['x-switchyard-warnings'] = headerText(summary.warnings.join('; '), MAX_WARNINGS_HEADER);
  return headers;
}

/**
 * Request text made fit for a header: what a header cannot carry is percent-encoded (a lone
 * surrogate, which UTF-8 cannot encode, as U+FFFD), and the value is cut at `max` characters.
 */
function headerText(text: string, max: number): string {
  const encoded = text.replace(/[^\x20-\x7e]/gu, (c) => (c.length === 1 && c >= '\ud800' && c <= '\udfff' ? '%EF%BF%BD' : encodeURIComponent(c)));
  if (encoded.length <= max) return encoded;
  // Never cut inside a %XX escape.
  return `${encoded.slice(0, max - 3).replace(/%[0-9A-F]?$/, '')}...`;
}
