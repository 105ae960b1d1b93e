/**
 * Model-name patterns through the real server: agents send provider model ids (Claude Code's
 * `claude-haiku-…` for background work, Codex's `gpt-5-codex`) and the catalog routes them.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { userTurn } from './routing-support.js';

let fake: FakeUpstream;
let gw: TestGateway;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  fake = await startFakeUpstream();
  const catalog = fakeCatalog(fake, {
    models: [
      // claude-* is written first; claude-*haiku* wins for haiku names as the more specific.
      { id: 'main', provider: 'up-anthropic', upstream_model: 'claude-opus-4-1', patterns: ['claude-*'], free: true },
      { id: 'quick', provider: 'up-openai', upstream_model: 'gpt-4.1-nano', patterns: ['claude-*haiku*', 'gpt-*-codex*'], free: true },
      { id: 'claude-sonnet-4-5-20250929', provider: 'up-anthropic', upstream_model: 'claude-sonnet-4-5-20250929', free: true },
    ],
  });
  gw = await startTestGateway({ catalog });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('catalog model-name patterns', () => {
  it('routes an agent\'s provider model id through the most specific matching pattern, and reports the served model', async () => {
    const { data, response } = await anthropic.messages.create({ model: 'claude-haiku-4-5-20251001', max_tokens: 64, messages: userTurn('Hi') }).withResponse();
    expect(data.content[0].type).toBe('text');
    expect(response.headers.get('x-switchyard-model')).toBe('quick');
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/chat/completions', body: { model: 'gpt-4.1-nano' } });

    const other = await anthropic.messages.create({ model: 'claude-opus-4-5-20251101', max_tokens: 64, messages: userTurn('Hi') }).withResponse();
    expect(other.response.headers.get('x-switchyard-model')).toBe('main');
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/messages', body: { model: 'claude-opus-4-1' } });

    const codex = await openai.responses.create({ model: 'gpt-5.1-codex-max', input: 'Hi', max_output_tokens: 64 }).withResponse();
    expect(codex.response.headers.get('x-switchyard-model')).toBe('quick');
  });

  it('an exact id wins over a pattern that also matches it', async () => {
    const { response } = await anthropic.messages.create({ model: 'claude-sonnet-4-5-20250929', max_tokens: 64, messages: userTurn('Hi') }).withResponse();
    expect(response.headers.get('x-switchyard-model')).toBe('claude-sonnet-4-5-20250929');
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'claude-sonnet-4-5-20250929' });
  });

  it('count_tokens and GET /v1/models/{id} resolve patterns too; a name nothing matches is a 404', async () => {
    const counted = await anthropic.messages.countTokens({ model: 'claude-3-5-haiku-latest', messages: userTurn('Hello there') });
    expect(counted.input_tokens).toBeGreaterThan(0);
    const model = await anthropic.models.retrieve('claude-haiku-4-5');
    expect(model.id).toBe('quick');
    await expect(anthropic.messages.create({ model: 'gemini-2.5-pro', max_tokens: 64, messages: userTurn('Hi') })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });
});
