import { GatewayError, toGatewayError, type StreamEvent } from '../ir/index.js';
import { capabilitiesOf } from '../providers/capabilities.js';
import type { AttemptOutcome, Candidate } from '../routing/index.js';
import type { OutputMeter } from './meter-output.js';
import type { ProviderCall, ProviderCapabilities, Target } from '../providers/types.js';
import type { PipelineDeps } from './types.js';

/** How one attempt ended (what it produced is in the caller's meter). */
export interface AttemptResult {
  outcome: AttemptOutcome;
  /** The attempt's `start` event (already yielded when the attempt produced output). */
  start: StreamEvent;
}

type BlockStart = Extract<StreamEvent, { type: 'text-start' | 'reasoning-start' }>;

/**
 * Runs one candidate and yields its client-bound events: `start` right before the first real
 * output, then the blocks, cut at the candidate's ceiling. Text and reasoning blocks are opened
 * only at their first non-empty delta, so an empty block (Anthropic opens one before a refusal)
 * is not output and a refusal behind it is still a refusal before output. A provider's `warning`
 * is not output either: it goes to `warn`.
 */
export async function* runAttempt(
  deps: PipelineDeps,
  call: ProviderCall,
  cand: Candidate,
  attemptIndex: number,
  clientSignal: AbortSignal,
  stop: AbortController,
  /** Owned by the caller, so an attempt whose consumer stops early can still be billed. */
  meter: OutputMeter,
  /** Notes a provider's warning (what it dropped of the request) for the run to report. */
  warn: (message: string) => void,
): AsyncGenerator<StreamEvent, AttemptResult> {
  const pending = new Map<string, BlockStart>();
  let start: StreamEvent = { type: 'start', id: call.requestId, model: cand.model.id };
  let startYielded = false;
  const release = function* (ev: StreamEvent): Generator<StreamEvent> {
    if (!startYielded) {
      startYielded = true;
      yield start;
    }
    yield ev;
  };
  let outcome: AttemptOutcome;
  try {
    const provider = deps.providers[cand.target.provider.type];
    if (!provider) throw new GatewayError('api_error', `no provider adapter for type ${cand.target.provider.type}`);
    for await (const raw of provider.stream(call)) {
      if (raw.type === 'start') {
        start = { type: 'start', id: raw.id, model: cand.model.id, ...(raw.usage ? { usage: raw.usage } : {}) };
        continue;
      }
      if (raw.type === 'warning') {
        // Not output: the run reports it (in the headers, or in the stream once they went out).
        warn(raw.message);
        continue;
      }
      if (raw.type === 'finish') {
        // Not `break`: reading the upstream body to its end lets its keep-alive connection go
        // back to the pool (closing it early costs a new connection per request).
        meter.finish = raw.finish;
        meter.usage = raw.usage;
        continue;
      }
      const ev = withAttemptId(raw, attemptIndex, cand.target, capabilitiesOf(deps.providers, cand.target).signatures);
      if ((ev.type === 'text-start' || ev.type === 'reasoning-start') && !(ev.type === 'reasoning-start' && ev.redacted !== undefined)) {
        meter.track(ev);
        pending.set(ev.id, ev);
        continue;
      }
      if ((ev.type === 'text-end' || ev.type === 'reasoning-end') && pending.has(ev.id)) {
        // A block that never carried anything: it was never shown, so it is not closed either.
        pending.delete(ev.id);
        meter.track(ev);
        continue;
      }
      if (ev.type === 'text-delta' || ev.type === 'reasoning-delta' || ev.type === 'tool-delta') {
        const piece = ev.type === 'tool-delta' ? ev.json : ev.text;
        const { text, reached } = meter.admit(ev.id, piece);
        if (text) {
          const opener = pending.get(ev.id);
          if (opener) {
            pending.delete(ev.id);
            yield* release(opener);
          }
          yield* release(ev.type === 'tool-delta' ? { ...ev, json: text } : { ...ev, text });
        }
        if (reached) {
          yield* closeShown(meter, pending);
          stop.abort();
          meter.finish = { unified: 'length', raw: 'gateway_max_tokens' };
          break;
        }
        continue;
      }
      if (ev.type === 'reasoning-signature' && pending.has(ev.id)) {
        yield* release(pending.get(ev.id)!);
        pending.delete(ev.id);
      }
      meter.track(ev);
      yield* release(ev);
    }
    outcome = meter.finish
      ? { kind: 'finished', finish: meter.finish }
      : { kind: 'failed', error: new GatewayError('bad_gateway', 'the upstream stream ended without a finish'), emittedOutput: meter.emittedOutput };
  } catch (e) {
    outcome = clientSignal.aborted ? { kind: 'cancelled' } : { kind: 'failed', error: toGatewayError(e), emittedOutput: meter.emittedOutput };
  }
  // Blocks still open that never showed anything are forgotten, so only shown ones get closed.
  for (const id of pending.keys()) meter.forget(id);
  return { outcome, start };
}

/** Closes the blocks the client has seen; pending (never shown) blocks are dropped. */
function* closeShown(meter: OutputMeter, pending: Map<string, BlockStart>): Generator<StreamEvent> {
  for (const id of pending.keys()) meter.forget(id);
  pending.clear();
  yield* closeOpenBlocks(meter);
}

/** Events that close every open block, for an attempt the gateway ends. */
export function closeOpenBlocks(meter: OutputMeter): StreamEvent[] {
  const events = meter.openBlocks().map(([id, kind]) => ({ type: `${kind}-end` as const, id }) as StreamEvent);
  for (const ev of events) meter.track(ev);
  return events;
}

/** Block ids are unique per attempt upstream; prefixing the attempt keeps them unique per stream. */
function withAttemptId(ev: StreamEvent, attempt: number, target: Target, signatures: ProviderCapabilities['signatures']): StreamEvent {
  // Reasoning a provider left unstamped gets its signature family (capabilities), so client
  // encoders know where its signature or encrypted content may go back to (never to another).
  if (ev.type === 'reasoning-start' && !ev.origin) {
    const origin = { provider: signatures.family, model: target.upstreamModel, ...(signatures.opaque ? { opaque: true } : {}) };
    return { ...ev, id: `${attempt}:${ev.id}`, origin };
  }
  return 'id' in ev && ev.type !== 'start' ? { ...ev, id: `${attempt}:${ev.id}` } : ev;
}
