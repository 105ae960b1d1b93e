/**
 * Request options that each protocol spells its own way, through the real gateway: structured
 * output (chat `response_format`, Responses `text.format`, Messages `output_config.format` or the
 * deprecated `output_format`) and allowed tools (`tool_choice` `allowed_tools`) reach every kind of
 * upstream in that upstream's own form, read back from the fake upstream's request log. The local
 * models answer structured output with JSON that the official SDKs' `parse()` helpers accept, and
 * call only the tools a choice allows.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/config/load-config.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { FAKE_KEY_ENV, fakeCatalogDocument } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { post } from './routing-support.js';

const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 }, units: { enum: ['metric', 'imperial'] } },
  required: ['city', 'days', 'units'],
  additionalProperties: false,
};
const ASK = [{ role: 'user' as const, content: 'Plan a forecast for "Paris".' }];

describe('structured output reaches each upstream in its own form', () => {
  let fake: FakeUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    fake = await startFakeUpstream();
    const doc = fakeCatalogDocument(fake) as { providers: Record<string, unknown>; models: Array<Record<string, unknown>> };
    doc.providers['up-responses'] = { type: 'openai-responses', base_url: `${fake.url}/v1`, api_key_env: FAKE_KEY_ENV, max_retries: 0 };
    doc.models.push({ id: 'up-responses', provider: 'up-responses', upstream_model: 'gpt-5-mini', price: { input: '1', output: '4' } });
    gw = await startTestGateway({ catalog: buildCatalog(doc, { [FAKE_KEY_ENV]: 'sk-fake' }, 'structured output catalog') });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  const upstream = () => fake.requests.at(-1)!.body as Record<string, any>;
  const chatFormat = { type: 'json_schema', json_schema: { name: 'forecast', schema: SCHEMA, strict: true } };

  it('chat json_schema: Anthropic gets output_config.format, OpenAI response_format, Responses text.format', async () => {
    for (const model of ['up-anthropic', 'up-openai', 'up-responses']) {
      const res = await post(gw, '/v1/chat/completions', { model, messages: ASK, response_format: chatFormat });
      expect(res.status, model).toBe(200);
    }
    const [anthropic, openai, responses] = fake.requests.map((r) => r.body as Record<string, any>);
    expect(anthropic.output_config).toEqual({ format: { type: 'json_schema', schema: SCHEMA } });
    expect(anthropic).not.toHaveProperty('response_format');
    expect(openai.response_format).toEqual(chatFormat);
    expect(responses.text).toEqual({ format: { type: 'json_schema', name: 'forecast', schema: SCHEMA, strict: true } });
    expect(responses).not.toHaveProperty('response_format');
  });

  it('messages output_config.format: OpenAI gets a named json_schema; Anthropic keeps the rest of output_config', async () => {
    const output_config = { effort: 'high', format: { type: 'json_schema', schema: SCHEMA } };
    expect((await post(gw, '/v1/messages', { model: 'up-openai', max_tokens: 200, messages: ASK, output_config })).status).toBe(200);
    expect(upstream().response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: SCHEMA } });
    expect(upstream()).not.toHaveProperty('output_config');

    expect((await post(gw, '/v1/messages', { model: 'up-anthropic', max_tokens: 200, messages: ASK, output_config })).status).toBe(200);
    expect(upstream().output_config).toEqual(output_config);
  });

  it('messages output_format (deprecated) goes to Anthropic as output_config.format', async () => {
    const res = await post(gw, '/v1/messages', { model: 'up-anthropic', max_tokens: 200, messages: ASK, output_format: { type: 'json_schema', schema: SCHEMA } });
    expect(res.status).toBe(200);
    expect(upstream().output_config).toEqual({ format: { type: 'json_schema', schema: SCHEMA } });
    expect(upstream()).not.toHaveProperty('output_format');
  });

  it('responses text.format: chat upstream gets response_format, and the response echoes text', async () => {
    const text = { format: { type: 'json_schema', name: 'forecast', schema: SCHEMA, strict: true }, verbosity: 'low' };
    const res = await post(gw, '/v1/responses', { model: 'up-openai', input: 'Plan a forecast for "Paris".', text });
    expect(res.status).toBe(200);
    expect(upstream().response_format).toEqual(chatFormat);
    expect(res.body.text).toEqual(text);

    expect((await post(gw, '/v1/responses', { model: 'up-anthropic', input: 'Plan it.', text })).status).toBe(200);
    expect(upstream().output_config).toEqual({ format: { type: 'json_schema', schema: SCHEMA } });
  });

  it('JSON mode reaches OpenAI; Anthropic has no schema-less form, so it is dropped with a warning', async () => {
    const toOpenAI = await post(gw, '/v1/chat/completions', { model: 'up-openai', messages: ASK, response_format: { type: 'json_object' } });
    expect(upstream().response_format).toEqual({ type: 'json_object' });
    expect(toOpenAI.headers.get('x-switchyard-warnings')).toBeNull();

    const toAnthropic = await post(gw, '/v1/chat/completions', { model: 'up-anthropic', messages: ASK, response_format: { type: 'json_object' } });
    expect(toAnthropic.status).toBe(200);
    expect(upstream()).not.toHaveProperty('output_config');
    expect(toAnthropic.headers.get('x-switchyard-warnings')).toMatch(/JSON mode dropped/);
  });

  it('chat allowed_tools: OpenAI and Responses get their own form, Anthropic only the allowed tools', async () => {
    const fn = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } });
    const tool_choice = { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'b' } }] } };
    for (const model of ['up-openai', 'up-responses', 'up-anthropic']) {
      const res = await post(gw, '/v1/chat/completions', { model, messages: ASK, tools: [fn('a'), fn('b')], tool_choice });
      expect(res.status, model).toBe(200);
    }
    const [openai, responses, anthropic] = fake.requests.map((r) => r.body as Record<string, any>);
    expect(openai.tool_choice).toEqual(tool_choice);
    expect(openai.tools.map((t: any) => t.function.name)).toEqual(['a', 'b']);
    expect(responses.tool_choice).toEqual({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }] });
    expect(anthropic.tools.map((t: any) => t.name)).toEqual(['b']);
    expect(anthropic.tool_choice).toEqual({ type: 'any' });

    const missing = await post(gw, '/v1/chat/completions', { model: 'up-openai', messages: ASK, tools: [fn('a')], tool_choice });
    expect(missing.status).toBe(400);
  });

  it('text format is the default: nothing is sent', async () => {
    await post(gw, '/v1/chat/completions', { model: 'up-anthropic', messages: ASK, response_format: { type: 'text' } });
    expect(upstream()).not.toHaveProperty('output_config');
  });

  it.each([
    ['/v1/chat/completions', { response_format: { type: 'json_schema', json_schema: { schema: SCHEMA } } }, 'response_format.json_schema.name'],
    ['/v1/chat/completions', { response_format: { type: 'xml' } }, 'response_format.type'],
    ['/v1/responses', { text: { format: { type: 'json_schema', name: 'a b', schema: SCHEMA } } }, 'text.format.name'],
    ['/v1/messages', { output_config: { format: { type: 'json_object' } } }, 'output_config.format.type'],
    ['/v1/messages', { output_format: { type: 'json_schema', schema: 'object' } }, 'output_format.schema'],
  ])('%s: a malformed format is a 400 naming %j', async (path, extra, param) => {
    const base = path === '/v1/responses' ? { input: 'Hi' } : { messages: ASK, max_tokens: 100 };
    const res = await post(gw, path, { model: 'up-openai', ...base, ...extra });
    expect(res.status).toBe(400);
    const text = JSON.stringify(res.body);
    expect(text).toContain(param);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('local models answer structured output that the SDKs parse', () => {
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    gw = await startTestGateway();
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => gw?.close());

  it('openai chat.completions.parse: message.parsed validates against the schema', async () => {
    const r = await openai.chat.completions.parse({
      model: 'local-sonnet',
      messages: ASK,
      response_format: { type: 'json_schema', json_schema: { name: 'forecast', schema: SCHEMA, strict: true } },
    });
    expect(r.choices[0].message.parsed).toEqual({ city: 'Paris', days: 1, units: 'metric' });
  });

  it('openai chat streamed with JSON mode: the content is one JSON object', async () => {
    const stream = await openai.chat.completions.create({ model: 'local-haiku', messages: ASK, response_format: { type: 'json_object' }, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(JSON.parse(text)).toEqual({ answer: expect.stringContaining('Paris') });
  });

  it('openai responses.parse: output_parsed validates against the schema', async () => {
    const r = await openai.responses.parse({
      model: 'local-sonnet',
      input: 'Plan a forecast for "Paris".',
      text: { format: { type: 'json_schema', name: 'forecast', schema: SCHEMA, strict: true } },
    });
    expect(r.output_parsed).toEqual({ city: 'Paris', days: 1, units: 'metric' });
  });

  it('anthropic messages.parse with output_config.format: parsed_output validates against the schema', async () => {
    const r = await anthropic.messages.parse({
      model: 'local-sonnet',
      max_tokens: 500,
      messages: ASK,
      output_config: { format: { type: 'json_schema', schema: SCHEMA } },
    });
    expect(r.parsed_output).toEqual({ city: 'Paris', days: 1, units: 'metric' });
  });

  it('a local model calls only the tools allowed_tools allows', async () => {
    const fn = (name: string, description: string) => ({ type: 'function' as const, function: { name, description, parameters: { type: 'object', properties: { city: { type: 'string' } } } } });
    const r = await openai.chat.completions.create({
      model: 'local-haiku',
      messages: [{ role: 'user', content: 'Use get_weather and get_time for "Paris".' }],
      tools: [fn('get_weather', 'Weather of a city'), fn('get_time', 'Local time of a city')],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'get_time' } }] } },
    });
    expect(r.choices[0].message.tool_calls?.map((c) => (c as { function: { name: string } }).function.name)).toEqual(['get_time']);
  });

  it('a schema counts toward the input tokens held and billed', async () => {
    const plain = await openai.chat.completions.create({ model: 'local-haiku', messages: ASK });
    const shaped = await openai.chat.completions.create({
      model: 'local-haiku',
      messages: ASK,
      response_format: { type: 'json_schema', json_schema: { name: 'forecast', schema: SCHEMA } },
    });
    expect(shaped.usage!.prompt_tokens).toBeGreaterThan(plain.usage!.prompt_tokens + 20);
  });
});
