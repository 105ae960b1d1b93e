/**
 * A Bedrock refusal (Claude's `stop_reason: "refusal"` in an InvokeModel stream) through the real
 * gateway: it triggers the model's refusal fallback as on the Anthropic provider, before output
 * (invisible apart from the fallback) and after output (the refused text stays, the fallback
 * follows in the same stream), with the project-written fake scripts `bedrock/invoke-stream-refusal`
 * and `bedrock/invoke-stream-late-refusal`. A warning the next candidate's provider raises once
 * the headers went out (Converse dropping a messages client's field) travels in the stream.
 */
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { bedrockCatalog, TEST_AWS_CREDENTIALS, useTestAwsCredentials } from '../support/bedrock-catalog.js';
import { useSdkGateway } from '../support/sdk-gateway.js';
import { checkChatStream, checkMessagesStream, recordingFetch } from '../support/stream-checks.js';

const rec = recordingFetch();
const sdk = useSdkGateway((f) => ({ catalog: bedrockCatalog(f) }), { fake: { awsCredentials: TEST_AWS_CREDENTIALS }, setup: useTestAwsCredentials, fetch: rec.fetch });

const hi: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hi' }];

describe('Bedrock refusal fallback', () => {
  it('messages, streamed: a refusal before output falls back; one message_start naming the replier', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-refusal');
    const { data: stream, response } = await sdk.anthropic.messages.create({ model: 'bd-guarded', max_tokens: 200, messages: hi, stream: true }).withResponse();
    for await (const _ of stream) void _;
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.events.filter((e) => e.type === 'message_start')).toHaveLength(1);
    expect(wire.events[0].message.model).toBe('up-openai');
    expect(wire.blocks.map((b) => b.type)).toEqual(['fallback', 'text']);
    expect(wire.blocks[0]).toMatchObject({ from: 'bd-guarded', to: 'up-openai', reason: expect.stringContaining('refusal') });
    expect(wire.stopReason).toBe('end_turn');
    // The headers went out with the replier's first output: the refused attempt is listed.
    expect(response.headers.get('x-switchyard-attempts')).toBe('bd-guarded=refusal');
    expect(sdk.fake.requests[0].path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream');
  });

  it('chat, not streamed: the replier answers; with fallbacks [] the refusal is content_filter', async () => {
    // max_tokens above 21,333 streams upstream even for a client that does not stream.
    sdk.fake.script('script:bedrock/invoke-stream-refusal');
    const { data, response } = await sdk.openai.chat.completions.create({ model: 'bd-guarded', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 40_000 }).withResponse();
    expect(data.model).toBe('up-openai');
    expect(response.headers.get('x-switchyard-attempts')).toBe('bd-guarded=refusal, up-openai=ok');
    sdk.fake.script('script:bedrock/invoke-stream-refusal');
    const none = await sdk.openai.chat.completions.create({ model: 'bd-guarded', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 40_000, fallbacks: [] } as any);
    expect(none.choices[0].finish_reason).toBe('content_filter');
  });

  it("after output: the refused text stays, the fallback follows, and the field Converse drops arrives as a late warning", async () => {
    sdk.fake.script('script:bedrock/invoke-stream-late-refusal', 'script:bedrock/converse-stream-text');
    // top_k is a field this SDK's types no longer list: a messages client's own field.
    const params = { model: 'bd-to-nova', max_tokens: 200, top_k: 5, messages: hi, stream: true as const };
    const { data: stream, response } = await sdk.anthropic.messages.create(params).withResponse();
    for await (const _ of stream) void _;
    expect(response.headers.get('x-switchyard-warnings')).toBeNull();
    const wire = await checkMessagesStream(await rec.last().text());
    expect(wire.blocks.map((b) => b.type)).toEqual(['text', 'fallback', 'text']);
    expect(wire.blocks[0].text).toBe('Here is how to begin:');
    expect(wire.blocks[1]).toMatchObject({ from: 'bd-to-nova', to: 'nova' });
    expect(wire.blocks[2].text).toBe('Switchyard speaks Converse too.');
    const delta = wire.events.find((e) => e.type === 'message_delta');
    expect(delta.switchyard).toEqual({ warnings: ['fields dropped (the upstream is not Anthropic): top_k'] });
    expect(sdk.fake.requests.map((r) => r.path.split('/').at(-1))).toEqual(['invoke-with-response-stream', 'converse-stream']);
    expect(sdk.fake.requests[0].body).toMatchObject({ top_k: 5 });
  });

  it('chat, streamed after output: the late warning is a switchyard.warning chunk', async () => {
    sdk.fake.script('script:bedrock/invoke-stream-late-refusal', 'script:bedrock/converse-stream-text');
    const stream = await sdk.openai.chat.completions.create({ model: 'bd-to-nova', stream: true, response_format: { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object' } } }, messages: [{ role: 'user', content: 'Hi' }] });
    for await (const _ of stream) void _;
    const wire = await checkChatStream(await rec.last().text());
    expect(wire.chunks.filter((c) => c.switchyard?.warning).map((c) => c.switchyard.warning)).toEqual(['JSON schema response format dropped (the upstream has no structured output): city']);
    expect(wire.chunks.find((c) => c.switchyard?.fallback)?.switchyard.fallback).toMatchObject({ from: 'bd-to-nova', to: 'nova' });
  });
});
