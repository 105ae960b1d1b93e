import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw?.close());

describe('smoke: both SDKs against the built-in local models', () => {
  it('OpenAI SDK streams an answer', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
    const stream = await client.chat.completions.create({ model: 'local-haiku', stream: true, messages: [{ role: 'user', content: 'Hello there' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toContain('Hello there');
  });

  it('Anthropic SDK gets a message', async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: gw.key });
    const msg = await client.messages.create({ model: 'local-haiku', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    expect(msg.content[0].type).toBe('text');
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
  });
});
