/**
 * The previous majors of the official SDKs, which users still run, in a smoke set against the
 * local models: `openai` 6 (chat and Responses), `@anthropic-ai/sdk` 0.x (messages) and the AI SDK
 * `ai` 6 with `@ai-sdk/openai` 3 (a tool round trip through stored Responses). Installed as npm
 * aliases beside the newest majors, which the other suites drive.
 */
import Anthropic from 'anthropic-sdk-v0';
import { createOpenAI } from 'ai-sdk-openai-v3';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai-v6';
import OpenAI from 'openai-v6';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  gw = await startTestGateway();
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => gw?.close());

describe('previous SDK majors', () => {
  it('openai 6: a chat completion, a streamed one, and a response', async () => {
    const chat = await openai.chat.completions.create({ model: 'local-haiku', messages: [{ role: 'user', content: 'Hello from openai 6' }] });
    expect(chat.choices[0].message.content).toContain('Hello from openai 6');
    expect(chat.usage!.completion_tokens).toBeGreaterThan(0);
    const stream = await openai.chat.completions.create({ model: 'local-haiku', messages: [{ role: 'user', content: 'Stream for openai 6' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain('Stream for openai 6');
    const response = await openai.responses.create({ model: 'local-haiku', input: 'Respond to openai 6' });
    expect(response.output_text).toContain('Respond to openai 6');
  });

  it('@anthropic-ai/sdk 0.x: a message and a streamed one', async () => {
    const message = await anthropic.messages.create({ model: 'local-haiku', max_tokens: 256, messages: [{ role: 'user', content: 'Hello from Anthropic 0.x' }] });
    expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Hello from Anthropic 0.x') });
    const final = await anthropic.messages.stream({ model: 'local-haiku', max_tokens: 256, messages: [{ role: 'user', content: 'Stream for Anthropic 0.x' }] }).finalMessage();
    expect(final.stop_reason).toBe('end_turn');
    expect(JSON.stringify(final.content)).toContain('Stream for Anthropic 0.x');
  });

  it('ai 6 with @ai-sdk/openai 3: a tool round trip through stored Responses', async () => {
    const model = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key }).responses('local-sonnet');
    const cities: string[] = [];
    const get_weather = tool({
      inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
      execute: async ({ city }) => {
        cities.push(city);
        return `Sunny in ${city}`;
      },
    });
    const r = await generateText({ model, tools: { get_weather }, prompt: 'What is the weather in Paris? Use get_weather.', stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(cities).toHaveLength(1);
    expect(r.steps[0].finishReason).toBe('tool-calls');
    expect(r.text).toContain(`Sunny in ${cities[0]}`);
  });
});
