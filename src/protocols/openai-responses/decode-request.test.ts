import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayError, type Request } from '../../ir/index.js';
import { encodeCompaction } from './compaction.js';
import { decodeRequest } from './decode-request.js';
import { REFERENCE_PRESENT, readTranscript, transcriptDir } from '../../../test/support/responses-fixtures.js';

const decode = (body: Record<string, unknown>): Request => decodeRequest({ model: 'm', input: 'x', ...body }, {});
const ext = (r: Request) => r.ext['openai-responses'] ?? {};

/** The GatewayError thrown for `body`, so tests can check kind and param. */
function rejection(body: Record<string, unknown>): GatewayError {
  try {
    decode(body);
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error('expected a 400');
}

describe('decode-request: input', () => {
  it("the gateway's compaction item is the summary as a user message; another server's travels as an other item", () => {
    const ours = { type: 'compaction', id: 'cmp_1', encrypted_content: encodeCompaction('Zed lives in Lima.') };
    const theirs = { type: 'compaction', id: 'cmp_2', encrypted_content: 'gAAAAB-openai-ciphertext' };
    const r = decode({ input: [{ role: 'user', content: 'Hi' }, ours, theirs, { role: 'user', content: 'Where?' }] });
    expect(r.messages.map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'Hi' }],
      [{ type: 'text', text: 'Summary of the earlier conversation, which was compacted:\n\nZed lives in Lima.' }],
      [{ type: 'text', text: 'Where?' }],
    ]);
    expect(ext(r).otherItems).toEqual([{ position: 2, item: theirs }]);
  });

  it('a string input is one user text message', () => {
    const r = decode({ input: 'Hi' });
    expect(r.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
    expect(r.system).toEqual([]);
  });

  it('message items, with or without type, string or parts', () => {
    const r = decode({
      input: [
        { role: 'user', content: 'plain' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'answer', annotations: [] }] },
      ],
    });
    expect(r.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'plain' }] },
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'answer' }] },
    ]);
  });

  it('input_image: data URL to base64, http(s) to url, detail kept; file_id and input_file are 400', () => {
    const r = decode({
      input: [{ role: 'user', content: [
        { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0K', detail: 'high' },
        { type: 'input_image', image_url: 'https://x.test/cat.jpg' },
      ] }],
    });
    expect(r.messages[0].content).toEqual([
      { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0K' }, detail: 'high' },
      { type: 'image', source: { kind: 'url', url: 'https://x.test/cat.jpg' } },
    ]);
    const e = rejection({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] });
    expect([e.kind, e.status, e.param]).toEqual(['invalid_request', 400, 'input.0.content.0.file_id']);
    expect(rejection({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }).param).toBe('input.0.content.0');
    expect(rejection({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png,raw' }] }] }).param).toBe('input.0.content.0.image_url');
  });

  it('system and developer messages become system parts, after instructions', () => {
    const r = decode({
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Dev rule.' },
        { role: 'user', content: 'q' },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Sys rule.' }] },
      ],
    });
    expect(r.system.map((p) => p.text)).toEqual(['Be brief.', 'Dev rule.', 'Sys rule.']);
    // Only the hoisted messages are marked: `instructions` is the top-level instruction.
    expect(r.system.map((p) => p.hoisted ?? false)).toEqual([false, true, true]);
    expect(r.messages).toHaveLength(1);
    expect(decode({ instructions: '', input: 'x' }).system).toEqual([]);
  });

  it('function_call merges into the assistant message; function_call_output merges into one tool message', () => {
    const r = decode({
      input: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: 'Let me check.' },
        { type: 'function_call', call_id: 'call_a', name: 'w', arguments: '{"c":"P"}', id: 'fc_1', status: 'completed' },
        { type: 'function_call', call_id: 'call_b', name: 'w', arguments: '{"c":"L"}' },
        { type: 'function_call_output', call_id: 'call_a', output: 'sunny' },
        { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'rain' }, { type: 'input_image', image_url: 'https://x.test/r.png' }] },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect(r.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(r.messages[1].content).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool-call', id: 'call_a', name: 'w', arguments: '{"c":"P"}', ext: { 'openai-responses': { id: 'fc_1', status: 'completed' } } },
      { type: 'tool-call', id: 'call_b', name: 'w', arguments: '{"c":"L"}' },
    ]);
    expect(r.messages[2].content).toEqual([
      { type: 'tool-result', toolCallId: 'call_a', content: [{ type: 'text', text: 'sunny' }] },
      { type: 'tool-result', toolCallId: 'call_b', content: [{ type: 'text', text: 'rain' }, { type: 'image', source: { kind: 'url', url: 'https://x.test/r.png' } }] },
    ]);
    expect(rejection({ input: [{ type: 'function_call', name: 'w', arguments: '{}' }] }).param).toBe('input.0.call_id');
  });

  it('reasoning items: joined summary, encrypted_content byte for byte, origin and id', () => {
    const enc = 'gAAAAABpPMlcH0HH+/==';
    const r = decode({
      input: [
        { role: 'user', content: 'q' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'One.' }, { type: 'summary_text', text: 'Two.' }], encrypted_content: enc },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
      ],
    });
    expect(r.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'One.\n\nTwo.', redacted: enc, origin: { provider: 'openai-responses', opaque: true }, ext: { 'openai-responses': { id: 'rs_1', summaryParts: ['One.', 'Two.'] } } },
        { type: 'tool-call', id: 'c', name: 'f', arguments: '{}' },
      ],
    });
    const bare = decode({ input: [{ type: 'reasoning', summary: [] }] }).messages[0].content[0];
    expect(bare).toEqual({ type: 'reasoning', text: '', origin: { provider: 'openai-responses', opaque: true }, ext: { 'openai-responses': {} } });
  });

  it('item_reference is dropped and recorded (nothing is stored); other item types travel in ext with their position', () => {
    const ref = decode({ input: [{ role: 'user', content: 'q' }, { type: 'item_reference', id: 'msg_1' }] });
    expect([ref.messages.length, ref.dropped]).toEqual([1, [{ feature: 'item_reference', reason: 'no stored responses', names: ['msg_1'] }]]);
    expect(rejection({ input: [{ type: 'item_reference' }] }).param).toBe('input.0.id');
    const call = { type: 'web_search_call', id: 'ws_1', status: 'completed' };
    const r = decode({ input: [{ role: 'user', content: 'q' }, call] });
    expect(ext(r).otherItems).toEqual([{ position: 1, item: call }]);
    expect(r.nativeOnly).toEqual([{ protocol: 'openai-responses', serverTools: true, upstream: 'Responses-speaking', feature: 'input items', names: ['web_search_call'] }]);
  });
});

describe('decode-request: tools and options', () => {
  it('function tools to IR tools; hosted tools kept in ext, never a 400', () => {
    const params = { type: 'object', properties: { c: { type: 'string' } }, required: ['c'] };
    const r = decode({
      tools: [
        { type: 'function', name: 'w', description: 'Weather', parameters: params, strict: true },
        { type: 'function', name: 'now', parameters: null, strict: false },
        { type: 'web_search' },
        { type: 'mcp', server_label: 's', server_url: 'https://m.test' },
      ],
    });
    expect(r.tools).toEqual([
      { name: 'w', description: 'Weather', inputSchema: params, ext: { 'openai-responses': { strict: true } } },
      { name: 'now', inputSchema: { type: 'object', properties: {} }, ext: { 'openai-responses': { strict: false } } },
    ]);
    expect(ext(r).hostedTools).toEqual([{ type: 'web_search' }, { type: 'mcp', server_label: 's', server_url: 'https://m.test' }]);
  });

  it('tool_choice and parallel_tool_calls', () => {
    expect(decode({ tool_choice: 'auto' }).toolChoice).toEqual({ type: 'auto' });
    expect(decode({ tool_choice: 'none' }).toolChoice).toEqual({ type: 'none' });
    expect(decode({ tool_choice: 'required' }).toolChoice).toEqual({ type: 'required' });
    const w = [{ type: 'function', name: 'w' }];
    expect(decode({ tools: w, tool_choice: { type: 'function', name: 'w' } }).toolChoice).toEqual({ type: 'tool', name: 'w' });
    // Names every provider refuses, after a hosted tool: the param is the client's own index.
    expect(rejection({ tools: w, tool_choice: { type: 'function', name: 'x' } }).param).toBe('tool_choice.name');
    expect(rejection({ tools: [{ type: 'web_search' }, ...w, ...w] }).param).toBe('tools.2.name');
    expect(rejection({ tools: [{ type: 'function', name: 'a b' }] }).param).toBe('tools.0.name');
    const hosted = decode({ tool_choice: { type: 'web_search_preview' } });
    expect([hosted.toolChoice, ext(hosted).toolChoice]).toEqual([undefined, { type: 'web_search_preview' }]);
    const allowed = decode({ tools: w, tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'w' }, { type: 'web_search' }] } });
    // The function tools it allows travel in the IR; the raw choice waits for a Responses upstream.
    expect([allowed.toolChoice, ext(allowed).toolChoice]).toEqual([{ type: 'required', allowed: ['w'] }, { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'w' }, { type: 'web_search' }] }]);
    expect(rejection({ tools: w, tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'x' }] } }).param).toBe('tool_choice');
    expect(decode({ parallel_tool_calls: false }).parallelToolCalls).toBe(false);
    expect(decode({}).parallelToolCalls).toBeUndefined();
  });

  it('reasoning effort and summary', () => {
    expect(decode({ reasoning: { effort: 'high', summary: 'detailed' } }).reasoning).toEqual({ enabled: true, effort: 'high', summary: 'detailed' });
    const minimal = decode({ reasoning: { effort: 'minimal' } });
    expect([minimal.reasoning, ext(minimal).reasoningEffort]).toEqual([{ enabled: true, effort: 'low' }, 'minimal']);
    expect(decode({ reasoning: { effort: 'none' } }).reasoning).toEqual({ enabled: false });
    expect(decode({ reasoning: { summary: 'auto' } }).reasoning).toEqual({ enabled: true, summary: 'auto' });
    expect(decode({}).reasoning).toEqual({ enabled: false });
    expect(rejection({ reasoning: { effort: 'max' } }).param).toBe('reasoning.effort');
  });

  it('gateway reasoning fields: thinking, reasoning_effort, thinking_effort', () => {
    expect(decode({ thinking: true }).reasoning).toEqual({ enabled: true });
    expect(decode({ thinking: { type: 'enabled', budget_tokens: 2048 } }).reasoning).toEqual({ enabled: true, budgetTokens: 2048 });
    expect(decode({ thinking: { type: 'adaptive' } }).reasoning).toEqual({ enabled: true, adaptive: true });
    expect(decode({ reasoning: { effort: 'high' }, thinking: { type: 'disabled' } }).reasoning).toEqual({ enabled: false });
    expect(decode({ reasoning_effort: 'medium' }).reasoning).toEqual({ enabled: true, effort: 'medium' });
    expect(decode({ thinking_effort: 'low' }).reasoning).toEqual({ enabled: true, effort: 'low' });
    expect(rejection({ thinking: { type: 'enabled', budget_tokens: 0 } }).param).toBe('thinking.budget_tokens');
    expect(rejection({ thinking: 'yes' }).param).toBe('thinking');
  });

  it('fast and speed', () => {
    expect(decode({}).fast).toBe(false);
    expect(decode({ fast: true }).fast).toBe(true);
    expect(decode({ speed: 'fast' }).fast).toBe(true);
    expect(rejection({ fast: 'yes' }).param).toBe('fast');
  });

  it('fallbacks: default when omitted, ids or {model}, [] disables', () => {
    expect(decode({}).fallbacks).toBe('default');
    expect(decode({ fallbacks: 'default' }).fallbacks).toBe('default');
    expect(decode({ fallbacks: ['a', { model: 'b' }] }).fallbacks).toEqual(['a', 'b']);
    expect(decode({ fallbacks: [] }).fallbacks).toEqual([]);
    expect(rejection({ fallbacks: [{}] }).param).toBe('fallbacks.0');
    expect(rejection({ fallbacks: 'none' }).param).toBe('fallbacks');
  });

  it('max_output_tokens, stream, temperature, top_p', () => {
    const d = decode({});
    expect([d.maxTokens, d.maxTokensDefaulted, d.stream, d.temperature, d.topP]).toEqual([16384, true, false, undefined, undefined]);
    const r = decode({ max_output_tokens: 300, stream: true, temperature: 0.2, top_p: 0.9 });
    expect([r.maxTokens, r.maxTokensDefaulted, r.stream, r.temperature, r.topP]).toEqual([300, false, true, 0.2, 0.9]);
    expect(rejection({ max_output_tokens: 0 }).param).toBe('max_output_tokens');
  });

  it('conversation is 400 (no conversations are kept); previous_response_id, resolved before decoding, is kept for the echo only', () => {
    expect(rejection({ conversation: 'conv_1' }).param).toBe('conversation');
    expect(decode({ previous_response_id: 'resp_1' }).ext['openai-responses']).toMatchObject({ previousResponseId: 'resp_1' });
    expect(decode({ previous_response_id: null }).messages).toHaveLength(1);
  });

  it('store, include, metadata, truncation, user, text and unknown fields travel in ext.fields', () => {
    const extra = {
      store: false, include: ['reasoning.encrypted_content'], metadata: { k: 'v' }, truncation: 'auto', user: 'u1',
      text: { format: { type: 'json_object' } }, service_tier: 'priority', prompt_cache_key: 'p', some_future_field: [1],
    };
    const r = decode({ ...extra, input: 'x' });
    expect(ext(r)).toEqual({ fields: extra });
    expect(r.passHeaders).toEqual({});
    expect(decode({}).ext).toEqual({});
  });
});

describe.skipIf(!REFERENCE_PRESENT)('decode-request: recorded requests', () => {
  const files = (REFERENCE_PRESENT ? readdirSync(transcriptDir) : []).filter((f) => f.endsWith('.request.json'));

  it.each(files)('%s decodes', (file) => {
    const body = JSON.parse(readTranscript(file)) as Record<string, unknown>;
    const r = decodeRequest(body, {});
    expect(r.model).toBe(body.model);
    expect(r.stream).toBe(true);
    expect(r.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: expect.any(String) }] });
  });

  it('the function-call follow-up has a call and its result', () => {
    const r = decodeRequest(JSON.parse(readTranscript('stream-text.request.json')), {});
    expect(r.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(r.messages[2].content[0]).toMatchObject({ type: 'tool-result', toolCallId: 'fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2' });
    expect(r.tools[0]).toMatchObject({ name: 'get_capital', description: '', ext: { 'openai-responses': { strict: true } } });
    expect(r.toolChoice).toEqual({ type: 'auto' });
  });

  it('the reasoning request asks for high effort with a detailed summary', () => {
    const r = decodeRequest(JSON.parse(readTranscript('stream-reasoning-summary.request.json')), {});
    expect(r.reasoning).toEqual({ enabled: true, effort: 'high', summary: 'detailed' });
    expect(ext(r).fields?.include).toEqual(['reasoning.encrypted_content']);
  });
});
