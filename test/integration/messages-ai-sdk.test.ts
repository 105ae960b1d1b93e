/**
 * The Vercel AI SDK's Anthropic provider (`ai` 7, `@ai-sdk/anthropic` 4) against /v1/messages:
 * generateText and streamText, with a tool the SDK executes between steps.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { weatherTools } from '../support/ai-sdk-weather.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { recordingFetch } from '../support/stream-checks.js';

let gw: TestGateway;
const rec = recordingFetch();
let model: ReturnType<ReturnType<typeof createAnthropic>>;

beforeAll(async () => {
  gw = await startTestGateway();
  model = createAnthropic({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: rec.fetch })('local-sonnet');
});
afterAll(async () => gw?.close());

const calls: string[] = [];
const tools = weatherTools(calls);

describe('AI SDK Anthropic provider', () => {
  it('generateText answers with usage', async () => {
    const r = await generateText({ model, prompt: 'Hello from the Anthropic provider', maxOutputTokens: 512, maxRetries: 0 });
    expect(r.text).toContain('Hello from the Anthropic provider');
    expect(r.finishReason).toBe('stop');
    expect(r.usage.outputTokens).toBeGreaterThan(0);
    expect(rec.last().url).toBe(`${gw.url}/v1/messages`);
  });

  it('streamText runs a tool across steps and answers from its result', async () => {
    calls.length = 0;
    const r = streamText({ model, tools, prompt: 'Weather in Lima? call get_weather', stopWhen: stepCountIs(3), maxOutputTokens: 512, maxRetries: 0 });
    const kinds = new Set<string>();
    for await (const part of r.fullStream) kinds.add(part.type);
    expect(calls).toHaveLength(1);
    expect([...kinds]).toEqual(expect.arrayContaining(['tool-call', 'tool-result', 'text-delta']));
    expect(await r.text).toContain(`Sunny in ${calls[0]}`);
    expect((await r.steps)[0].finishReason).toBe('tool-calls');
  });
});
