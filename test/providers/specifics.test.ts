import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamEvent } from '../../src/ir/index.js';
import { anthropicProvider } from '../../src/providers/anthropic/index.js';
import { openaiProvider } from '../../src/providers/openai/index.js';
import { closeAgents } from '../../src/providers/transport/index.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { REFERENCE_PRESENT, TRANSCRIPTS, assertWellFormed, collect, drain, makeCall, providerConfig } from './helpers.js';

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(async () => {
  await closeAgents();
  await fake.close();
});

function replayAnthropic(file: string, request = {}): Promise<UpstreamEvent[]> {
  const cfg = providerConfig('anthropic', fake.url, { headers: { 'x-fake-scenario': `transcript:anthropic-messages/${file}` } });
  return drain(anthropicProvider, makeCall(cfg, { request }));
}

function replayOpenai(file: string): Promise<UpstreamEvent[]> {
  const cfg = providerConfig('openai', `${fake.url}/v1`, { headers: { 'x-fake-scenario': `transcript:openai-chat/${file}` } });
  return drain(openaiProvider, makeCall(cfg));
}

describe.skipIf(!REFERENCE_PRESENT)('anthropic stream specifics', () => {
  it('reassembles tool input split mid-token into valid JSON', async () => {
    const c = collect(await replayAnthropic('stream-tool-use.sse'));
    const tool = c.content.find((p) => p.type === 'tool-call');
    expect(tool).toMatchObject({ type: 'tool-call', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather' });
    expect(JSON.parse((tool as { arguments: string }).arguments)).toEqual({ location: 'Paris' });
    expect(c.finish.unified).toBe('tool-calls');
  });

  it('turns a tool with only an empty input_json_delta into {}', async () => {
    const events = await replayAnthropic('stream-tool-use-empty-input.jsonl');
    expect(events.filter((e) => e.type === 'tool-delta')).toEqual([]);
    const tool = collect(events).content.find((p) => p.type === 'tool-call');
    expect(tool).toMatchObject({ name: 'updateIssueList', arguments: '{}' });
  });

  it('passes the thinking signature on byte for byte', async () => {
    const raw = readFileSync(path.join(TRANSCRIPTS, 'anthropic-messages/stream-thinking.sse'), 'utf8');
    const signature = /"signature_delta","signature":"([^"]+)"/.exec(raw)![1];
    const events = await replayAnthropic('stream-thinking.sse');
    assertWellFormed(events);
    const c = collect(events);
    expect(c.content[0]).toMatchObject({ type: 'reasoning', signature });
    expect(c.content[0].type === 'reasoning' && c.content[0].text.startsWith('This is a straightforward question')).toBe(true);
    expect(c.content[1].type).toBe('text');
  });

  it('keeps redacted thinking opaque data', async () => {
    const raw = readFileSync(path.join(TRANSCRIPTS, 'anthropic-messages/stream-redacted-thinking.sse'), 'utf8');
    const data = [...raw.matchAll(/"redacted_thinking","data":"([^"]+)"/g)].map((m) => m[1]);
    expect(data).toHaveLength(2);
    const c = collect(await replayAnthropic('stream-redacted-thinking.sse'));
    const redacted = c.content.filter((p) => p.type === 'reasoning').map((p) => (p as { redacted?: string }).redacted);
    expect(redacted).toEqual(data);
  });

  it('closes the tool block and finishes with length when max_tokens cuts a tool_use', async () => {
    const events = await replayAnthropic('stream-max-tokens-in-tool-use.sse');
    assertWellFormed(events);
    const toolStart = events.find((e) => e.type === 'tool-start')!;
    expect(events).toContainEqual({ type: 'tool-end', id: (toolStart as { id: string }).id });
    expect(events.at(-1)).toMatchObject({ type: 'finish', finish: { unified: 'length', raw: 'max_tokens' } });
  });

  it('maps stop_reason refusal with stop_details', async () => {
    const events = await replayAnthropic('maintainer-authored/stream-refusal.sse');
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      finish: { unified: 'refusal', details: { type: 'refusal', category: 'cyber' } },
    });
  });

  it('reports usage numbers exactly', async () => {
    const events = await replayAnthropic('stream-text.jsonl');
    expect(events[0]).toMatchObject({ type: 'start', usage: { input: { noCache: 12, cacheRead: 0, cacheWrite: 0 } } });
    expect(events.at(-1)).toMatchObject({ usage: { input: { noCache: 12, cacheRead: 0, cacheWrite: 0 }, output: { total: 30, reasoning: 0 } } });
  });
});

describe.skipIf(!REFERENCE_PRESENT)('openai stream specifics', () => {
  it('keeps parallel tool calls apart by index', async () => {
    const c = collect(await replayOpenai('stream-tool-calls-parallel.sse'));
    const tools = c.content.filter((p) => p.type === 'tool-call') as Array<{ id: string; name: string; arguments: string }>;
    expect(tools.map((t) => [t.id, t.name])).toEqual([
      ['call_JMW1whyEaYG438VE1OIflxA2', 'GetWeatherArgs'],
      [expect.stringMatching(/^call_/), 'get_stock_price'],
    ]);
    for (const t of tools) expect(() => JSON.parse(t.arguments)).not.toThrow();
    expect(c.finish.unified).toBe('tool-calls');
    expect(c.usage).toEqual({ input: { noCache: 149, cacheRead: 0, cacheWrite: 0 }, output: { total: 60, reasoning: 0 } });
  });

  it('turns DeepSeek reasoning_content into a reasoning block with reasoning usage', async () => {
    const events = await replayOpenai('stream-deepseek-reasoning-content.sse');
    assertWellFormed(events);
    const c = collect(events);
    expect(c.content.map((p) => p.type)).toEqual(['reasoning', 'text']);
    expect(c.usage).toEqual({ input: { noCache: 6, cacheRead: 0, cacheWrite: 0 }, output: { total: 212, reasoning: 198 } });
  });

  it('maps a streamed refusal to finish refusal, its text as the explanation (not answer text)', async () => {
    const c = collect(await replayOpenai('stream-refusal.sse'));
    expect(c.finish).toEqual({
      unified: 'refusal',
      raw: 'stop',
      details: { type: 'refusal', category: null, explanation: "I'm sorry, I can't assist with that request." },
    });
    // No output block: a refusal before output stays invisible when the gateway falls back.
    expect(c.content).toEqual([]);
  });

  it('finishes with length and exact usage', async () => {
    const c = collect(await replayOpenai('stream-finish-length.sse'));
    expect(c.finish.unified).toBe('length');
    expect(c.usage).toEqual({ input: { noCache: 79, cacheRead: 0, cacheWrite: 0 }, output: { total: 1, reasoning: 0 } });
  });

  it('follows only choice 0 of an n=3 stream', async () => {
    const c = collect(await replayOpenai('stream-multiple-choices-n3.sse'));
    expect(c.content).toHaveLength(1);
    expect(JSON.parse((c.content[0] as { text: string }).text)).toMatchObject({ city: 'San Francisco' });
  });

  it('tolerates the Azure prompt-filter opening chunk', async () => {
    const events = await replayOpenai('stream-azure-prompt-filter-results.jsonl');
    expect(events[0]).toEqual({ type: 'start', id: 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt', model: 'gpt-5-nano-2025-08-07' });
    expect(collect(events).usage.output).toEqual({ total: 78, reasoning: 64 });
  });

  it('decodes a JSON body sent in answer to stream:true', async () => {
    const c = collect(await replayOpenai('completion-tool-calls-parallel.json'));
    expect(c.content.map((p) => p.type)).toEqual(['tool-call', 'tool-call']);
    expect(c.finish.unified).toBe('tool-calls');
  });
});

describe('generated streams', () => {
  it('serves 20 words in both protocols and respects max_tokens unless told otherwise', async () => {
    const a = providerConfig('anthropic', fake.url);
    const o = providerConfig('openai', `${fake.url}/v1`);
    const aText = collect(await drain(anthropicProvider, makeCall(a)));
    const oText = collect(await drain(openaiProvider, makeCall(o)));
    expect((aText.content[0] as { text: string }).text.split(' ')).toHaveLength(20);
    expect((oText.content[0] as { text: string }).text.split(' ')).toHaveLength(20);
    const cut = collect(await drain(openaiProvider, makeCall(o, { request: { maxTokens: 5 } })));
    expect(cut.finish.unified).toBe('length');
    expect(cut.usage.output.total).toBe(5);
    const ignored = providerConfig('openai', `${fake.url}/v1`, { headers: { 'x-fake-scenario': 'words:50?ignoreMaxTokens' } });
    const over = collect(await drain(openaiProvider, makeCall(ignored, { request: { maxTokens: 5 } })));
    expect(over.usage.output.total).toBe(50);
    expect(over.finish.unified).toBe('stop');
  });
});

describe('anthropic server tools and citations (project script stream-web-search)', () => {
  const replay = (script: string) => drain(anthropicProvider, makeCall(providerConfig('anthropic', fake.url, { headers: { 'x-fake-scenario': `script:anthropic-messages/${script}` } })));

  for (const script of ['stream-web-search.sse', 'response-web-search.json']) {
    it(`${script}: server_tool_use is a server tool call (never a client tool call), its result and the citations travel`, async () => {
      const events = await replay(script);
      assertWellFormed(events);
      const c = collect(events);
      expect(c.content.map((p) => p.type)).toEqual(['text', 'server-tool-call', 'server-tool-result', 'text', 'text', 'text']);
      expect(c.content.some((p) => p.type === 'tool-call')).toBe(false);
      const call = c.content[1] as { id: string; name: string; arguments: string };
      expect(call).toMatchObject({ id: 'srvtoolu_01SwyWebSearch000000001', name: 'web_search' });
      expect(JSON.parse(call.arguments)).toEqual({ query: 'weather Paris today' });
      expect(c.content[2]).toMatchObject({ type: 'server-tool-result', toolCallId: 'srvtoolu_01SwyWebSearch000000001', kind: 'web_search_tool_result' });
      expect((c.content[2] as { content: Array<{ url: string }> }).content.map((r) => r.url)).toEqual(['https://example.org/paris-weather', 'https://example.com/forecast/paris']);
      expect(c.content[4]).toMatchObject({ type: 'text', text: 'light rain this afternoon, around 9 °C', citations: [{ type: 'web_search_result_location', url: 'https://example.org/paris-weather' }] });
      expect(c.finish.unified).toBe('stop');
    });
  }
});
