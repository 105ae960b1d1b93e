/**
 * The Vercel AI SDK's OpenAI Responses provider (`ai` 7, `@ai-sdk/openai` 4) against
 * /v1/responses: generateText and streamText, with a tool the SDK executes between steps. The
 * SDK defaults to `store: true`, so its follow-up requests reference earlier output with
 * `item_reference`, which the gateway resolves from its stored responses (responses-store.test.ts).
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { weatherTools } from '../support/ai-sdk-weather.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { recordingFetch } from '../support/stream-checks.js';

let gw: TestGateway;
const rec = recordingFetch();
let model: ReturnType<ReturnType<typeof createOpenAI>['responses']>;

beforeAll(async () => {
  gw = await startTestGateway();
  model = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: rec.fetch }).responses('local-sonnet');
});
afterAll(async () => gw?.close());

const calls: string[] = [];
const tools = weatherTools(calls);

describe('AI SDK OpenAI Responses provider', () => {
  it('generateText answers with usage', async () => {
    const r = await generateText({ model, prompt: 'Hello from the AI SDK', maxRetries: 0 });
    expect(r.text).toContain('Hello from the AI SDK');
    expect(r.finishReason).toBe('stop');
    expect(r.usage.outputTokens).toBeGreaterThan(0);
    expect(rec.last().url).toBe(`${gw.url}/v1/responses`);
  });

  it('streamText streams the text', async () => {
    const r = streamText({ model, prompt: 'Stream for the AI SDK', maxRetries: 0 });
    const parts: string[] = [];
    for await (const t of r.textStream) parts.push(t);
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.join('')).toContain('Stream for the AI SDK');
    expect(await r.finishReason).toBe('stop');
  });

  it('generateText runs a tool and answers from its result', async () => {
    calls.length = 0;
    const r = await generateText({ model, tools, prompt: 'What is the weather in Paris? Use get_weather.', stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(calls).toHaveLength(1);
    expect(r.steps[0].toolCalls[0]).toMatchObject({ toolName: 'get_weather' });
    expect(r.steps[0].finishReason).toBe('tool-calls');
    expect(r.text).toContain(`Sunny in ${calls[0]}`);
    // The second step referenced the first step's output by id, resolved from the stored response.
    expect(rec.last().headers.get('x-switchyard-warnings')).toBeNull();
  });

  it('streamText runs a tool across steps, with reasoning', async () => {
    calls.length = 0;
    const r = streamText({
      model,
      tools,
      prompt: 'Weather in Lima? call get_weather',
      stopWhen: stepCountIs(3),
      maxRetries: 0,
      providerOptions: { openai: { reasoningEffort: 'low', reasoningSummary: 'auto', forceReasoning: true, store: false } },
    });
    const kinds = new Set<string>();
    for await (const part of r.fullStream) kinds.add(part.type);
    expect(calls).toHaveLength(1);
    expect([...kinds]).toEqual(expect.arrayContaining(['reasoning-delta', 'tool-call', 'tool-result', 'text-delta']));
    expect(await r.text).toContain(`Sunny in ${calls[0]}`);
    // With store:false the SDK sends the reasoning back with its encrypted_content: no warning.
    expect(rec.last().headers.get('x-switchyard-warnings')).toBeNull();
  });
});
