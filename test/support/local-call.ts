/** Builders and checks shared by the local provider's tests (src/providers/local). */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import { baseRequest } from './ir-fixtures.js';
import { Collector, type Request, type UpstreamEvent } from '../../src/ir/index.js';
import type { ProviderCall } from '../../src/providers/types.js';
import { localProvider } from '../../src/providers/local/index.js';

export function makeRequest(over: Partial<Request> = {}): Request {
  return baseRequest({
    model: 'local-sonnet',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there, how are you today?' }] }],
    maxTokens: 4096,
    ...over,
  });
}

export function makeCall(
  request: Request,
  opts: { upstreamModel?: string; tokensPerSecond?: number; paceWholeAnswers?: boolean; clientStreams?: boolean; signal?: AbortSignal; requestId?: string } = {},
): ProviderCall {
  return {
    request,
    target: {
      provider: { id: 'local', type: 'local', baseUrl: '', headers: {}, timeouts: { connectMs: 1, firstByteMs: 1, idleMs: 1, responseMs: 1 }, maxRetries: 0 },
      modelId: opts.upstreamModel ?? 'local-sonnet',
      upstreamModel: opts.upstreamModel ?? 'local-sonnet',
      modelOptions: { tokens_per_second: opts.tokensPerSecond ?? 0, ...(opts.paceWholeAnswers ? { pace_whole_answers: true } : {}) },
    },
    requestId: opts.requestId ?? 'req_1',
    signal: opts.signal ?? new AbortController().signal,
    ...(opts.clientStreams === undefined ? {} : { clientStreams: opts.clientStreams }),
  };
}

export async function run(call: ProviderCall): Promise<{ events: UpstreamEvent[]; result: Collector }> {
  const events: UpstreamEvent[] = [];
  const result = new Collector();
  for await (const ev of localProvider.stream(call)) {
    events.push(ev);
    result.push(ev);
  }
  expectWellFormed(events);
  return { events, result };
}

/** start, then blocks that open, carry deltas of their own kind and close, then finish. */
export function expectWellFormed(events: UpstreamEvent[]): void {
  expect(events[0]?.type).toBe('start');
  expect(events.at(-1)?.type).toBe('finish');
  let open: { id: string; kind: string } | undefined;
  const seen = new Set<string>();
  for (const ev of events.slice(1, -1)) {
    const [kind, phase] = ev.type.split('-') as [string, string];
    expect(['text', 'reasoning', 'tool']).toContain(kind);
    const id = (ev as { id: string }).id;
    if (phase === 'start') {
      expect(open).toBeUndefined();
      expect(seen.has(id)).toBe(false);
      seen.add(id);
      open = { id, kind };
    } else {
      expect(open).toEqual({ id, kind });
      if (phase === 'end') open = undefined;
    }
  }
  expect(open).toBeUndefined();
}

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;

export function schemaValidator(schema: Record<string, unknown>): (value: unknown) => boolean {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return (value) => {
    const ok = validate(value);
    if (!ok) console.error(JSON.stringify(validate.errors), JSON.stringify(value));
    return ok;
  };
}
