/**
 * Stored Responses through the real server: `store` (default true) keeps a response and its input
 * items per account, so `previous_response_id`, `item_reference`, retrieve, input_items and delete
 * work whatever provider answered. Driven with the AI SDK's `openai.responses()` (which sends
 * earlier turns as `item_reference` items) and the openai SDK; the fake upstream records what the
 * model was really given.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { scriptsDir, startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { ResponseStore } from '../../src/ledger/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bodyErrors } from '../support/stream-checks.js';

let fake: FakeUpstream;
let gw: TestGateway;
let oa: OpenAI;

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startTestGateway({ catalog: fakeCatalog(fake) });
  oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

/** The chat messages the upstream received on its `n`th request. */
const upstreamMessages = (n: number) => (fake.requests[n].body as { messages: Array<Record<string, unknown>> }).messages;

describe('stored Responses', () => {
  it('AI SDK openai.responses(): a multi-turn tool conversation keeps its history through item_reference', async () => {
    const sent: any[] = [];
    const capture: typeof fetch = async (input, init) => {
      sent.push(JSON.parse(String(init?.body)));
      return fetch(input, init);
    };
    const model = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, fetch: capture }).responses('up-openai');
    const tools = {
      GetWeatherArgs: tool({
        inputSchema: jsonSchema<{ city?: string }>({ type: 'object', properties: { city: { type: 'string' } } }),
        execute: async () => 'Sunny, 24 C',
      }),
    };
    // Turn 1: a tool call, its result, an answer. Turn 2: a follow-up on the whole conversation.
    fake.script('script:openai-chat/stream-tool-call-single', { words: 5 }, { words: 3 });
    const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
    const first = streamText({ model, messages: [question], tools, stopWhen: stepCountIs(3), maxRetries: 0 });
    await first.consumeStream();
    expect(await first.finishReason).toBe('stop');
    const answer = await first.text;
    const followUp = streamText({ model, messages: [question, ...(await first.responseMessages), { role: 'user', content: 'And tomorrow?' }], tools, maxRetries: 0 });
    await followUp.consumeStream();

    // The SDK sent the earlier assistant output by reference only ...
    const last = sent.at(-1).input as any[];
    expect(last.filter((i) => i.type === 'item_reference').length).toBeGreaterThan(0);
    expect(JSON.stringify(last)).not.toContain(answer);
    // ... and the model still got the whole conversation, in order.
    const messages = upstreamMessages(2);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(messages[0].content).toBe('What is the weather in Paris?');
    expect(messages[1]).toMatchObject({ tool_calls: [{ function: { name: 'GetWeatherArgs' } }] });
    expect(messages[2]).toMatchObject({ content: 'Sunny, 24 C', tool_call_id: (messages[1] as any).tool_calls[0].id });
    expect(messages[3].content).toBe(answer);
    expect(messages[4].content).toBe('And tomorrow?');
  });

  it('an item_reference to a stored function call gives the model the tool call its output answers', async () => {
    fake.script('script:anthropic-messages/stream-tool-use', 'words:3');
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await oa.responses.create({ model: 'up-anthropic', input: 'Weather in Paris?', tools });
    const call = first.output.find((i) => i.type === 'function_call')!;
    expect(call).toMatchObject({ name: 'get_weather', call_id: 'toolu_01SwyWeather0000000001' });
    expect(call.id).toMatch(/./);
    await oa.responses.create({
      model: 'up-anthropic',
      tools,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'item_reference', id: call.id! },
        { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 24 C' },
      ],
    });
    const messages = (fake.requests[1].body as any).messages;
    expect(messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[1].content.at(-1)).toMatchObject({ type: 'tool_use', id: call.call_id, name: 'get_weather', input: JSON.parse(call.arguments) });
    expect(messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: call.call_id });
  });

  it('openai SDK: previous_response_id continues a stored conversation; retrieve, input_items and delete', async () => {
    fake.setScenario({ words: 4 });
    const first = await oa.responses.create({ model: 'up-openai', input: 'My name is Zed.', instructions: 'Be brief.' });
    expect((first as unknown as { store: boolean }).store).toBe(true);
    const second = await oa.responses.create({ model: 'up-openai', input: 'What is my name?', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    // The model got the first turn (not its instructions, which do not carry over), its answer, then the question.
    const messages = upstreamMessages(1);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'My name is Zed.'],
      ['assistant', first.output_text],
      ['user', 'What is my name?'],
    ]);

    const got = await oa.responses.retrieve(second.id);
    expect(got).toMatchObject({ id: second.id, status: 'completed', output_text: second.output_text, previous_response_id: first.id });
    expect(await bodyErrors('getResponse', 200, got)).toEqual([]);

    // Input items: the earlier turn's too, each with an id, newest first unless asked otherwise.
    const items = await oa.responses.inputItems.list(second.id);
    expect(items.data.map((i: any) => i.type)).toEqual(['message', 'message', 'message']);
    expect(items.data.map((i: any) => i.role)).toEqual(['user', 'assistant', 'user']);
    expect(items.data.every((i: any) => typeof i.id === 'string')).toBe(true);
    const asc = await oa.responses.inputItems.list(second.id, { order: 'asc', limit: 1 });
    expect([asc.data.length, asc.has_more, (asc.data[0] as any).role]).toEqual([1, true, 'user']);
    const next = await oa.responses.inputItems.list(second.id, { order: 'asc', after: (asc.data[0] as any).id });
    expect(next.data.map((i: any) => i.role)).toEqual(['assistant', 'user']);

    expect(await oa.responses.delete(second.id)).toMatchObject({ id: second.id, object: 'response', deleted: true });
    await expect(oa.responses.retrieve(second.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(oa.responses.delete(second.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // The first one is still there to continue from.
    expect((await oa.responses.retrieve(first.id)).id).toBe(first.id);
  });

  it('streamed responses are stored before their last event; store:false stores nothing', async () => {
    fake.setScenario({ words: 4 });
    const stream = await oa.responses.create({ model: 'up-openai', input: 'Stream me', stream: true });
    let id = '';
    for await (const ev of stream) if (ev.type === 'response.completed') id = ev.response.id;
    expect((await oa.responses.retrieve(id)).status).toBe('completed');

    const unstored = await oa.responses.create({ model: 'up-openai', input: 'Forget me', store: false });
    expect((unstored as unknown as { store: boolean }).store).toBe(false);
    await expect(oa.responses.retrieve(unstored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const err = await oa.responses.create({ model: 'up-openai', input: 'Hi', previous_response_id: unstored.id }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.error).toMatchObject({ param: 'previous_response_id' });
  });

  it("another account's response, and its items, are a 404", async () => {
    fake.setScenario({ words: 4 });
    const mine = await oa.responses.create({ model: 'up-openai', input: 'Private' });
    const other = await gw.newAccount();
    const theirs = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: other.key, maxRetries: 0 });
    await expect(theirs.responses.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.responses.inputItems.list(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.responses.delete(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.responses.create({ model: 'up-openai', input: 'Hi', previous_response_id: mine.id })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const ref = await theirs.responses.create({ model: 'up-openai', input: [{ type: 'item_reference', id: mine.output[0].id! }] }).catch((e) => e);
    expect(ref).toBeInstanceOf(OpenAI.NotFoundError);
    expect(ref.error).toMatchObject({ param: 'input.0' });
    // Nothing of it reached the upstream.
    expect(fake.requests).toHaveLength(1);
    expect((await oa.responses.retrieve(mine.id)).id).toBe(mine.id);
  });

  it('stored reasoning goes back signed only to the provider kind that produced it', async () => {
    fake.script('script:anthropic-messages/stream-thinking');
    const stream = await oa.responses.create({ model: 'up-anthropic', input: 'How do I cross the street?', reasoning: { effort: 'medium' }, stream: true });
    let first: any;
    for await (const ev of stream) if (ev.type === 'response.completed') first = ev.response;
    const signature = readFileSync(`${scriptsDir()}/anthropic-messages/stream-thinking.sse`, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)))
      .find((e) => e.delta?.type === 'signature_delta').delta.signature;

    fake.script('words:3', 'words:3');
    await oa.responses.create({ model: 'up-anthropic', input: 'Thanks!', previous_response_id: first.id, reasoning: { effort: 'medium' } });
    const assistant = (fake.requests[1].body as any).messages[1];
    expect(assistant.content[0]).toMatchObject({ type: 'thinking', signature });
    // The same stored turn continued on an OpenAI upstream: the signature stays behind.
    await oa.responses.create({ model: 'up-openai', input: 'Thanks!', previous_response_id: first.id });
    expect(JSON.stringify(fake.requests[2].body)).not.toContain(signature);
    expect(upstreamMessages(2).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('a stored response expires after the retention: not found, not referable, and purged by a later store', async () => {
    let now = Date.now();
    const store = new ResponseStore(gw.ledger.statements, 60_000, () => now);
    const item = { type: 'message', id: 'msg_ret_0', role: 'assistant', content: [] };
    await store.store(gw.accountId, { id: 'resp_retention_1', output: [item] }, [], []);
    expect((await store.get(gw.accountId, 'resp_retention_1'))?.response).toMatchObject({ id: 'resp_retention_1' });
    expect([...(await store.items(gw.accountId, ['msg_ret_0'])).keys()]).toEqual(['msg_ret_0']);
    now += 60_001;
    expect(await store.get(gw.accountId, 'resp_retention_1')).toBeUndefined();
    expect((await store.items(gw.accountId, ['msg_ret_0'])).size).toBe(0);
    expect(await store.delete(gw.accountId, 'resp_retention_1')).toBe(false);
    // The next store (past the purge interval) deletes the expired row.
    now += 10 * 60_000;
    await store.store(gw.accountId, { id: 'resp_retention_2', output: [] }, [], []);
    const rows = await gw.ledger.db.selectFrom('stored_responses').select('id').where('id', '=', 'resp_retention_1').execute();
    expect(rows).toEqual([]);
  });
});
