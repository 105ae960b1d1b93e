/**
 * POST /v1/messages/count_tokens through the real gateway with the Anthropic SDK:
 * `{input_tokens}` counted with the gateway's tokenizer over system, messages and tools, equal
 * to what a real request is held and billed for; an unknown model is a 404 in Anthropic shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors, recordingFetch } from '../support/stream-checks.js';

let gw: TestGateway;
let client: Anthropic;
const rec = recordingFetch();

beforeAll(async () => {
  gw = await startTestGateway();
  client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, fetch: rec.fetch, maxRetries: 0 });
});
afterAll(async () => gw?.close());

const messages: Anthropic.MessageParam[] = [
  { role: 'user', content: 'What is the weather like in Paris today?' },
  { role: 'assistant', content: 'Let me check.' },
  { role: 'user', content: [{ type: 'text', text: 'Thanks, and tomorrow?' }] },
];
const tools: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'Weather of a city on a day', input_schema: { type: 'object', properties: { city: { type: 'string' }, day: { type: 'string' } } } },
];

describe('messages.countTokens()', () => {
  it('counts messages, and more with a system prompt and tools', async () => {
    const bare = await client.messages.countTokens({ model: 'local-sonnet', messages });
    expect(bare.input_tokens).toBeGreaterThan(10);
    expect(await bodyErrors('countMessageTokens', 200, JSON.parse(await rec.last().text()))).toEqual([]);
    const system = await client.messages.countTokens({ model: 'local-sonnet', messages, system: 'You are a meteorologist who answers in haiku.' });
    const withTools = await client.messages.countTokens({ model: 'local-sonnet', messages, system: 'You are a meteorologist who answers in haiku.', tools });
    expect(system.input_tokens).toBeGreaterThan(bare.input_tokens);
    expect(withTools.input_tokens).toBeGreaterThan(system.input_tokens);
  });

  it('matches the input tokens a real request is billed for', async () => {
    const counted = await client.messages.countTokens({ model: 'local-haiku', messages, tools });
    const msg = await client.messages.create({ model: 'local-haiku', max_tokens: 50, messages, tools });
    expect(msg.usage.input_tokens).toBe(counted.input_tokens);
  });

  it('an unknown model is a 404 not_found_error in Anthropic shape', async () => {
    const err = await client.messages.countTokens({ model: 'no-such-model', messages }).catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(err.error.error.message).toContain('no-such-model');
  });

  it('a malformed body is a 400 invalid_request_error', async () => {
    const err = await client.messages.countTokens({ model: 'local-sonnet' } as any).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});
