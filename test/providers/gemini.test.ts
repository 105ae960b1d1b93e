/**
 * The Gemini provider over real HTTP against the fake upstream: every recorded Gemini transcript
 * of the reference folder (when present) and the project's own scripts (always), the request it
 * sends, thought signatures carried back byte for byte to the parts they came on, and Google's
 * errors as typed GatewayErrors.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError, type Message, type Request, type UpstreamEvent } from '../../src/ir/index.js';
import { geminiProvider } from '../../src/providers/gemini/index.js';
import { encodeRequest } from '../../src/providers/gemini/encode-request.js';
import { closeAgents } from '../../src/providers/transport/index.js';
import type { ProviderConfig } from '../../src/providers/types.js';
import { scriptsDir, startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { REFERENCE_PRESENT, reportSkippedWithoutReference } from '../support/reference.js';
import { TRANSCRIPTS, assertWellFormed, baseRequest, collect, drainSettled, makeCall } from './helpers.js';

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(async () => {
  await closeAgents();
  await fake.close();
});

let seq = 0;
function geminiConfig(scenario: string): ProviderConfig {
  return {
    id: `gemini-test-${seq++}`,
    type: 'gemini',
    baseUrl: `${fake.url}/v1beta`,
    apiKey: 'gm-test-key',
    headers: { 'x-fake-scenario': scenario },
    timeouts: { connectMs: 2_000, firstByteMs: 5_000, idleMs: 5_000, responseMs: 5_000 },
    maxRetries: 0,
  };
}

async function run(scenario: string, stream = true, request: Partial<Request> = {}) {
  fake.reset();
  const call = makeCall(geminiConfig(scenario), { request: { stream, ...request }, target: { upstreamModel: 'gemini-2.5-flash' } });
  return drainSettled(geminiProvider, { ...call, requestId: 'req_gm1' });
}

const eventLine = ({ type, ...rest }: UpstreamEvent) => `${type} ${JSON.stringify(rest)}`;

/** The model turn the gateway sends back for an answer: what a client returns on its next turn. */
function echoedTurn(events: UpstreamEvent[]): unknown {
  const answer: Message = { role: 'assistant', content: collect(events).content };
  const body = encodeRequest(baseRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }, answer] }));
  return (body.contents as Array<{ role: string; parts: unknown[] }>)[1];
}

/** The parts of every candidate of a recorded answer (a JSON body, a JSON array or SSE), merged into one turn's order. */
function recordedParts(file: string): Array<Record<string, unknown>> {
  const text = readFileSync(file, 'utf8');
  const bodies: unknown[] = file.endsWith('.sse')
    ? text.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)))
    : ([] as unknown[]).concat(JSON.parse(text));
  return bodies.flatMap((b) => ((b as { candidates?: Array<{ content?: { parts?: Array<Record<string, unknown>> } }> }).candidates?.[0]?.content?.parts ?? []));
}

/** Every signed part of a recorded answer comes back signed, with the same signature, on the same kind of part, in order. */
function expectSignaturesBack(file: string, events: UpstreamEvent[]): void {
  const shape = (p: Record<string, unknown>) => [p.thoughtSignature, Object.keys(p).filter((k) => k !== 'thoughtSignature').sort()];
  const sent = echoedTurn(events) as { parts: Array<Record<string, unknown>> } | undefined;
  const signedSent = sent?.parts.filter((p) => p.thoughtSignature !== undefined) ?? [];
  const signedRecorded = recordedParts(file).filter((p) => p.thoughtSignature !== undefined);
  expect(signedSent.map(shape)).toEqual(signedRecorded.map(shape));
}

describe('the Gemini provider on its own scripts', () => {
  it('streams text from streamGenerateContent?alt=sse with the key in x-goog-api-key', async () => {
    const { events, error } = await run('script:google-gemini/stream-text');
    expect(error).toBeUndefined();
    assertWellFormed(events);
    const req = fake.requests[0];
    expect(req.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(req.headers['x-goog-api-key']).toBe('gm-test-key');
    expect(req.headers.authorization).toBeUndefined();
    const c = collect(events);
    expect(c.content).toEqual([{ type: 'text', text: 'Switchyard routes every token to Gemini.' }]);
    expect(c.finish).toEqual({ unified: 'stop', raw: 'STOP' });
    expect(c.usage).toEqual({ input: { noCache: 12, cacheRead: 0, cacheWrite: 0 }, output: { total: 7, reasoning: 0 } });
    expect(c.id).toBe('swy-script-gemini-1');
    expect(c.model).toBe('gemini-2.5-flash');
  });

  it('asks generateContent for a non-streamed call', async () => {
    const { events } = await run('script:google-gemini/generate-thinking', false);
    expect(fake.requests[0].path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    const c = collect(events);
    expect(c.content.map((p) => p.type)).toEqual(['reasoning', 'reasoning', 'text']);
    expect(c.usage.output).toEqual({ total: 35, reasoning: 27 });
  });

  it('turns thought parts into reasoning and a signed part into a signature-only reasoning block before it', async () => {
    const { events } = await run('script:google-gemini/stream-thinking');
    assertWellFormed(events);
    expect(events.map(eventLine)).toMatchSnapshot();
    const [thought, signed, text] = collect(events).content;
    expect(thought).toMatchObject({ type: 'reasoning', text: '**Weighing the question**\n\nThe user asks for the capital of France. It is Paris.', origin: { provider: 'gemini', opaque: true } });
    expect(signed).toMatchObject({ type: 'reasoning', text: '', signature: 'Cr0BAYs3bq5fGm1hcnRpbi1zaWduYXR1cmUtZm9yLXRlc3RzLWJ5dGUtZXhhY3Q+/==' });
    expect(text).toEqual({ type: 'text', text: 'The capital of France is Paris.' });
    expect(collect(events).usage).toEqual({ input: { noCache: 20, cacheRead: 0, cacheWrite: 0 }, output: { total: 47, reasoning: 40 } });
  });

  it('mints stable ids for parallel function calls and finishes with tool-calls', async () => {
    const { events } = await run('script:google-gemini/stream-function-calls-parallel');
    const c = collect(events);
    const calls = c.content.filter((p) => p.type === 'tool-call');
    expect(calls).toEqual([
      { type: 'tool-call', id: 'call_req_gm1_0', name: 'get_weather', arguments: '{"location":"Paris"}' },
      { type: 'tool-call', id: 'call_req_gm1_1', name: 'get_time', arguments: '{}' },
    ]);
    expect(c.finish).toEqual({ unified: 'tool-calls', raw: 'STOP' });
    expect(c.usage).toEqual({ input: { noCache: 16, cacheRead: 32, cacheWrite: 0 }, output: { total: 47, reasoning: 25 } });
  });

  it('carries the signature back on the first call only, and names tool results after their calls', async () => {
    const { events } = await run('script:google-gemini/stream-function-calls-parallel');
    const answer: Message = { role: 'assistant', content: collect(events).content };
    const body = encodeRequest(baseRequest({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] },
        answer,
        { role: 'tool', content: [
          { type: 'tool-result', toolCallId: 'call_req_gm1_1', content: [{ type: 'text', text: '14:00' }] },
          { type: 'tool-result', toolCallId: 'call_req_gm1_0', content: [{ type: 'text', text: 'rain' }], isError: false },
        ] },
      ],
    }));
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
      { role: 'model', parts: [
        { functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: 'EpgCAYs3bq7wZnVuY3Rpb24tY2FsbC1zaWduYXR1cmUtZm9yLXBhcmFsbGVsLWNhbGxz+/=' },
        { functionCall: { name: 'get_time', args: {} } },
      ] },
      { role: 'user', parts: [
        { functionResponse: { name: 'get_time', response: { output: '14:00' } } },
        { functionResponse: { name: 'get_weather', response: { output: 'rain' } } },
      ] },
    ]);
  });

  it('reads SAFETY with no content as a refusal before any output', async () => {
    const { events } = await run('script:google-gemini/stream-finish-safety');
    assertWellFormed(events);
    expect(events.map((e) => e.type)).toEqual(['start', 'finish']);
    expect(collect(events).finish).toMatchObject({ unified: 'refusal', raw: 'SAFETY', details: { safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', blocked: true }] } });
  });

  it('reads a blocked prompt as a refusal', async () => {
    const { events } = await run('script:google-gemini/generate-prompt-blocked');
    expect(collect(events).finish).toEqual({
      unified: 'refusal',
      raw: 'PROHIBITED_CONTENT',
      details: { blockReason: 'PROHIBITED_CONTENT', explanation: 'The prompt was blocked for prohibited content.' },
    });
  });

  it.each([
    ['error-429-resource-exhausted', 429, 'rate_limit', true, 'RESOURCE_EXHAUSTED', 2],
    ['error-503-unavailable', 503, 'unavailable', true, 'UNAVAILABLE', undefined],
    ['error-400-api-key-invalid', 401, 'authentication', false, 'INVALID_ARGUMENT', undefined],
  ])('maps %s to a typed error', async (file, status, kind, retryable, code, retryAfter) => {
    const { error } = await run(`script:google-gemini/${file}`);
    expect(error).toBeInstanceOf(GatewayError);
    const e = error as GatewayError;
    expect({ status: e.status, kind: e.kind, retryable: e.retryable, code: e.code, retryAfter: e.retryAfter }).toEqual({ status, kind, retryable, code, retryAfter });
  });

  it('an error chunk after output is a typed, retryable error, after the text it followed', async () => {
    const { events, error } = await run('script:google-gemini/stream-error-unavailable');
    expect(events.map((e) => e.type)).toEqual(['start', 'text-start', 'text-delta']);
    expect(error).toBeInstanceOf(GatewayError);
    const e = error as GatewayError;
    expect({ status: e.status, kind: e.kind, retryable: e.retryable, code: e.code }).toEqual({ status: 503, kind: 'unavailable', retryable: true, code: 'UNAVAILABLE' });
  });

  it('a malformed chunk is a bad_gateway error', async () => {
    const { error } = await run('script:google-gemini/stream-text?malformed=1');
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).kind).toBe('bad_gateway');
  });

  const answers = readdirSync(path.join(scriptsDir(), 'google-gemini')).filter((f) => !f.includes('error-')).sort();
  it.each(answers)('%s: what a client sends back reaches Gemini with each signature on the part it came on', async (file) => {
    const { events } = await run(`script:google-gemini/${file}`, !file.endsWith('.json'));
    expectSignaturesBack(path.join(scriptsDir(), 'google-gemini', file), events);
  });
});

/** The Vertex partial-arguments stream needs `streamFunctionCallArguments`, which the gateway never asks for. */
const NOT_REQUESTED = new Set(['stream-vertex-function-call-partial-args.jsonl']);

reportSkippedWithoutReference('the recorded Gemini transcripts replayed by the Gemini provider');
describe.skipIf(!REFERENCE_PRESENT)('the Gemini provider replays every recorded google-gemini transcript over HTTP', () => {
  const dir = path.join(TRANSCRIPTS, 'google-gemini');
  const files = REFERENCE_PRESENT
    ? readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.(json|sse|jsonl)$/.test(f) && !f.endsWith('.request.json') && !NOT_REQUESTED.has(f))
        .sort()
    : [];
  it.each(files)('%s', async (file) => {
    const { events, error } = await run(`transcript:google-gemini/${file}`);
    expect(fake.requests).toHaveLength(1);
    if (path.basename(file).startsWith('error-')) {
      expect(error).toBeInstanceOf(GatewayError);
      const e = error as GatewayError;
      expect(e.status).toBe(Number(/error-(\d{3})/.exec(file)![1]));
      // One file per recording (see the Bedrock replays): no .snap entries that read as obsolete without the reference folder.
      await expect(`${JSON.stringify({ kind: e.kind, message: e.message, code: e.code, retryable: e.retryable, retryAfter: e.retryAfter }, null, 2)}\n`).toMatchFileSnapshot(`./__snapshots__/gemini-transcripts/${file}.error.txt`);
      return;
    }
    expect(error).toBeUndefined();
    assertWellFormed(events);
    await expect(`${events.map(eventLine).join('\n')}\n`).toMatchFileSnapshot(`./__snapshots__/gemini-transcripts/${file}.txt`);
    expectSignaturesBack(path.join(dir, file), events);
  });
});
