/**
 * Adding a provider is its folder plus one registry line: this provider exists only in this file,
 * is registered through the registry (`withProviders`), named by a YAML config and serves requests
 * through the real HTTP server. Its capabilities (data on the provider) are what the pipeline
 * reads: its minimum thinking budget, its forced-tool rule and the lack of JSON mode.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load-config.js';
import type { UpstreamEvent } from '../../src/ir/index.js';
import { withProviders } from '../../src/providers/registry.js';
import type { Provider, ProviderCall } from '../../src/providers/types.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

/** An in-process upstream that answers with what it was asked: the last user text and the thinking budget it got. */
const echoProvider: Provider = {
  type: 'echo',
  defaultBaseUrl: 'https://echo.invalid',
  capabilities: () => ({
    thinking: { minBudget: 2000, forcedToolBlocksThinking: true },
    jsonMode: false,
    serverTools: false,
    signatures: { family: 'echo', opaque: true },
  }),
  async *stream(call: ProviderCall): AsyncGenerator<UpstreamEvent> {
    const last = call.request.messages.at(-1);
    const said = last?.role === 'user' ? last.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : '';
    const r = call.request.reasoning;
    const text = `${call.target.upstreamModel} heard "${said}"; thinking ${r.enabled ? `budget ${r.budgetTokens}` : 'off'}`;
    yield { type: 'start', id: 'echo_1', model: call.target.upstreamModel };
    if (r.enabled) {
      // Unstamped: the pipeline stamps it with this provider's signature family, which is opaque.
      yield { type: 'reasoning-start', id: 'r' };
      yield { type: 'reasoning-delta', id: 'r', text: 'pondering' };
      yield { type: 'reasoning-signature', id: 'r', signature: 'ECHO-SIGNATURE' };
      yield { type: 'reasoning-end', id: 'r' };
    }
    yield { type: 'text-start', id: 't' };
    yield { type: 'text-delta', id: 't', text };
    yield { type: 'text-end', id: 't' };
    const usage = { input: { noCache: 3, cacheRead: 0, cacheWrite: 0 }, output: { total: 5, reasoning: 0 } };
    yield { type: 'finish', finish: { unified: 'stop' }, usage };
  },
};

const CONFIG = ['providers:', '  mine:', '    type: echo', 'models:', '  - id: echo-1', '    provider: mine', '    upstream_model: echo-upstream', '    free: true', '    capabilities: { reasoning: true }', ''].join('\n');

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-new-provider-'));
const configPath = path.join(dir, 'config.yaml');
writeFileSync(configPath, CONFIG);
const registry = withProviders(echoProvider);
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startTestGateway({ configPath, providers: registry });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
});

describe('a provider defined only in a test', () => {
  it('is unknown to a config read without it: the registry is the only list of provider types', () => {
    expect(() => loadConfigFile(configPath, {})).toThrow(/providers\.mine\.type must be equal to one of the allowed values: .*"openai"/);
    expect(loadConfigFile(configPath, {}, { providers: registry }).providers.get('mine')).toMatchObject({ type: 'echo', baseUrl: 'https://echo.invalid' });
  });

  it('serves a chat request through the HTTP server, streamed and not', async () => {
    const whole = await client.chat.completions.create({ model: 'echo-1', messages: [{ role: 'user', content: 'ping' }] });
    expect(whole.choices[0].message.content).toBe('echo-upstream heard "ping"; thinking off');
    expect(whole.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 5 });
    const stream = await client.chat.completions.create({ model: 'echo-1', stream: true, messages: [{ role: 'user', content: 'pong' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('echo-upstream heard "pong"; thinking off');
  });

  it('gets the thinking budget its capabilities ask for, and none with a forced tool', async () => {
    const low = await client.chat.completions.create({ model: 'echo-1', reasoning_effort: 'low', messages: [{ role: 'user', content: 'think' }] });
    // low is 1024 tokens; this provider's minimum is 2000.
    expect(low.choices[0].message.content).toBe('echo-upstream heard "think"; thinking budget 2000');
    // Its signatures are opaque (capabilities): the reasoning text reaches a chat client, the signature does not.
    expect(JSON.stringify(low)).toContain('pondering');
    expect(JSON.stringify(low)).not.toContain('ECHO-SIGNATURE');
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    const forced = await client.chat.completions
      .create({ model: 'echo-1', reasoning_effort: 'low', tools, tool_choice: 'required', messages: [{ role: 'user', content: 'act' }] })
      .withResponse();
    expect(forced.data.choices[0].message.content).toBe('echo-upstream heard "act"; thinking off');
    expect(forced.response.headers.get('x-switchyard-warnings')).toMatch(/thinking/i);
  });

  it('has JSON mode dropped with a warning, as its capabilities say it has none', async () => {
    const res = await client.chat.completions
      .create({ model: 'echo-1', response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'json' }] })
      .withResponse();
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('x-switchyard-warnings')).toMatch(/JSON mode dropped/);
  });
});
