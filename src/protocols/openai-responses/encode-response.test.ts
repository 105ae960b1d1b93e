import { describe, expect, it } from 'vitest';
import { Collector, type Response, type StreamEvent, type Attempt } from '../../ir/index.js';
import { encodeResponse } from './encode-response.js';
import { REFERENCE_PRESENT, encodeEvents, metaFor, readTranscript, responseErrors } from '../../../test/support/responses-fixtures.js';

const usage = { input: { noCache: 800, cacheRead: 65, cacheWrite: 0 }, output: { total: 163, reasoning: 128 } };
const base = (over: Partial<Response> = {}): Response => ({
  id: 'up_1',
  model: 'gpt-test',
  content: [{ type: 'text', text: 'Hello' }],
  finish: { unified: 'stop' },
  usage,
  attempts: [{ model: 'gpt-test', outcome: 'ok' }],
  created: 1765591383,
  ...over,
});

describe('encode-response', () => {
  it.skipIf(!REFERENCE_PRESENT)('mirrors the recorded Response shape: reasoning with encrypted_content, then a message', () => {
    const meta = metaFor({
      instructions: 'Be exact.',
      reasoning: { effort: 'high', summary: 'detailed' },
      tools: [{ type: 'function', name: 'calculator', description: 'Calc', parameters: { type: 'object', properties: {} }, strict: true }],
      max_output_tokens: 500,
      metadata: { run: '7' },
    });
    const body = encodeResponse(base({
      content: [
        { type: 'reasoning', text: 'Adding up.', redacted: 'gAAAA+/=', origin: { provider: 'openai-responses' } },
        { type: 'text', text: 'Final result: 570' },
      ],
      servedVariant: 'standard',
    }), meta) as Record<string, any>;
    expect(responseErrors(body)).toEqual([]);
    expect(body).toMatchObject({
      id: 'resp_req0001', object: 'response', created_at: 1743082658, status: 'completed', error: null,
      incomplete_details: null, instructions: 'Be exact.', max_output_tokens: 500, model: 'gpt-test',
      parallel_tool_calls: true, reasoning: { effort: 'high', summary: 'detailed' }, store: true, previous_response_id: null, temperature: 1, top_p: 1,
      tool_choice: 'auto', text: { format: { type: 'text' } }, truncation: 'disabled', metadata: { run: '7' },
      tools: [{ type: 'function', name: 'calculator', description: 'Calc', parameters: { type: 'object', properties: {} }, strict: true }],
      switchyard: { attempts: [{ model: 'gpt-test', outcome: 'ok' }], served_variant: 'standard' },
    });
    expect(body.output).toEqual([
      { type: 'reasoning', id: 'rs_req0001_0', summary: [{ type: 'summary_text', text: 'Adding up.' }], encrypted_content: 'gAAAA+/=' },
      { type: 'message', id: 'msg_req0001_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Final result: 570', annotations: [], logprobs: [] }] },
    ]);
    expect(body.usage).toEqual({
      input_tokens: 865, input_tokens_details: { cached_tokens: 65, cache_write_tokens: 0 },
      output_tokens: 163, output_tokens_details: { reasoning_tokens: 128 }, total_tokens: 1028,
    });
    // Same top-level fields as the live API (minus ones we cannot honour: billing, service tier, prompt cache...).
    const recorded = JSON.parse(readTranscript('response-reasoning-summary-and-text.json'));
    const skipped = ['billing', 'max_tool_calls', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier', 'service_tier', 'top_logprobs', 'user'];
    for (const k of Object.keys(recorded)) if (!skipped.includes(k)) expect(body, k).toHaveProperty(k);
    expect(Object.keys(body.output[0]).sort()).toEqual(Object.keys(recorded.output[0]).sort());
  });

  it('Anthropic-origin thinking: summary text, and the signature or redacted data only inside a swy1 envelope', () => {
    const body = encodeResponse(base({
      content: [
        { type: 'reasoning', text: 'Hmm.', signature: 'EqQBCkYIBx', origin: { provider: 'anthropic' } },
        { type: 'reasoning', text: '', redacted: 'opaque', origin: { provider: 'anthropic' } },
        { type: 'reasoning', text: 'Unsigned.', origin: { provider: 'openai' } },
      ],
    }), metaFor()) as Record<string, any>;
    expect(body.output.map((o: any) => o.summary)).toEqual([[{ type: 'summary_text', text: 'Hmm.' }], [], [{ type: 'summary_text', text: 'Unsigned.' }]]);
    expect(body.output.map((o: any) => o.encrypted_content?.slice(0, 5))).toEqual(['swy1.', 'swy1.', undefined]);
    expect(JSON.stringify(body)).not.toContain('EqQBCkYIBx');
    const envelope = JSON.parse(Buffer.from(body.output[1].encrypted_content.slice(5), 'base64url').toString());
    expect(envelope).toEqual({ provider: 'anthropic', text: '', redacted: 'opaque' });
  });

  it('tool calls, fallback parts skipped, attempts in switchyard', () => {
    const body = encodeResponse(base({
      model: 'backup',
      content: [
        { type: 'fallback', from: 'gpt-test', to: 'backup', reason: 'refusal' },
        { type: 'tool-call', id: 'call_1', name: 'w', arguments: '{"c":"P"}' },
      ],
      finish: { unified: 'tool-calls' },
      attempts: [{ model: 'gpt-test', outcome: 'refusal' }, { model: 'backup', outcome: 'ok' }],
    }), metaFor({ tools: [{ type: 'function', name: 'w' }], tool_choice: { type: 'function', name: 'w' }, parallel_tool_calls: false })) as Record<string, any>;
    expect(responseErrors(body)).toEqual([]);
    expect(body.output).toEqual([{ type: 'function_call', id: 'fc_req0001_0', call_id: 'call_1', name: 'w', arguments: '{"c":"P"}', status: 'completed' }]);
    expect([body.model, body.tool_choice, body.parallel_tool_calls]).toEqual(['backup', { type: 'function', name: 'w' }, false]);
    expect(body.switchyard.attempts).toHaveLength(2);
  });

  it('length and refusal are incomplete with their reason; defaults echo as null', () => {
    const cut = encodeResponse(base({ finish: { unified: 'length' } }), metaFor()) as Record<string, any>;
    expect([cut.status, cut.incomplete_details, cut.max_output_tokens, cut.instructions]).toEqual(['incomplete', { reason: 'max_output_tokens' }, null, null]);
    expect(responseErrors(cut)).toEqual([]);
    const refused = encodeResponse(base({ finish: { unified: 'refusal', raw: 'refusal' } }), metaFor()) as Record<string, any>;
    expect([refused.status, refused.incomplete_details]).toEqual(['incomplete', { reason: 'content_filter' }]);
  });

  it('length marks the cut item incomplete; a refusal explanation becomes a refusal part; both match the stream', () => {
    const events = (finish: StreamEvent & { type: 'finish' }): StreamEvent[] => [
      { type: 'start', id: 'up', model: 'gpt-test' },
      { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', text: 'ok' }, { type: 'text-end', id: 't' },
      { type: 'tool-start', id: 'c', toolCallId: 'call', name: 'f' }, { type: 'tool-delta', id: 'c', json: '{"a":' }, { type: 'tool-end', id: 'c' },
      finish,
    ];
    const cases = [
      { type: 'finish', attempts: [] as Attempt[], finish: { unified: 'length' }, usage } as const,
      { type: 'finish', attempts: [] as Attempt[], finish: { unified: 'refusal', details: { type: 'refusal', explanation: 'No.' } }, usage } as const,
    ];
    for (const finish of cases) {
      const c = new Collector();
      events(finish).forEach((e) => c.push(e));
      const body = encodeResponse(base({ content: c.content, finish: c.finish, usage: c.usage }), metaFor()) as Record<string, any>;
      expect(responseErrors(body)).toEqual([]);
      expect(body.output).toEqual(encodeEvents(events(finish)).events.at(-1)!.response.output);
      if (finish.finish.unified === 'length') expect(body.output.map((i: any) => i.status)).toEqual(['completed', 'incomplete']);
      else expect(body.output.at(-1).content).toEqual([{ type: 'refusal', refusal: 'No.' }]);
    }
  });

  it('echoes the raw effort, hosted tools and text settings', () => {
    const body = encodeResponse(base(), metaFor({
      reasoning: { effort: 'minimal' }, tools: [{ type: 'web_search' }], text: { format: { type: 'json_object' } }, temperature: 0.3, user: 'u',
    })) as Record<string, any>;
    expect([body.reasoning, body.tools, body.text, body.temperature, body.user]).toEqual([
      { effort: 'minimal', summary: null }, [{ type: 'web_search' }], { format: { type: 'json_object' } }, 0.3, 'u',
    ]);
  });

  it('gives the same output as the stream encoder for the same events', () => {
    const events: StreamEvent[] = [
      { type: 'start', id: 'up', model: 'gpt-test' },
      { type: 'reasoning-start', id: 'r' }, { type: 'reasoning-delta', id: 'r', text: 'plan' }, { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', text: 'ok' }, { type: 'text-end', id: 't' },
      { type: 'tool-start', id: 'c', toolCallId: 'call', name: 'f' }, { type: 'tool-delta', id: 'c', json: '{}' }, { type: 'tool-end', id: 'c' },
      { type: 'finish', attempts: [], finish: { unified: 'tool-calls' }, usage },
    ];
    const c = new Collector();
    events.forEach((e) => c.push(e));
    const body = encodeResponse(base({ content: c.content, finish: c.finish, usage: c.usage }), metaFor()) as Record<string, any>;
    const streamed = encodeEvents(events).events.at(-1)!.response;
    expect(body.output).toEqual(streamed.output);
    expect(body.usage).toEqual(streamed.usage);
  });
});
