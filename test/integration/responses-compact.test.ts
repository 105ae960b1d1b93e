/**
 * `POST /v1/responses/compact` through the openai SDK's `client.responses.compact` (openai 7):
 * the routed model summarises the conversation, the answer is OpenAI's compacted response (every
 * user message, then one `compaction` item), billed as a response, and the compaction item given
 * back as input reaches any model as the summary. For an OpenAI and an Anthropic upstream.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { nanosToUsd } from '../../src/ir/index.js';
import { COMPACTION_PROMPT } from '../../src/protocols/openai-responses/compaction.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { useSdkGateway } from '../support/sdk-gateway.js';
import { bodyErrors } from '../support/stream-checks.js';

const sdk = useSdkGateway((fake) => ({ catalog: fakeCatalog(fake) }));

const conversation: OpenAI.Responses.ResponseInputItem[] = [
  { role: 'user', content: 'My name is Zed and I live in Lima.' },
  { role: 'assistant', content: 'Nice to meet you, Zed.' },
  { role: 'user', content: [{ type: 'input_text', text: 'Remember both.' }] },
];

/** Every text of the conversation the upstream's `n`th request gave the model, in order (chat or messages body). */
function upstreamTexts(n: number): string[] {
  const body = sdk.fake.requests[n].body as { messages: Array<{ role: string; content: unknown }> };
  return body.messages.filter((m) => m.role !== 'system' && m.role !== 'developer').flatMap((m) =>
    typeof m.content === 'string' ? [m.content] : (m.content as Array<{ text?: string }>).flatMap((p) => (typeof p.text === 'string' ? [p.text] : [])),
  );
}

describe.each(['up-openai', 'up-anthropic'])('POST /v1/responses/compact on %s', (model) => {
  it('summarises the conversation through the model: the user messages, then one compaction item, billed', async () => {
    sdk.fake.setScenario({ words: 6 });
    const { data: compacted, response } = await sdk.openai.responses.compact({ model, input: conversation, instructions: 'Be brief.' }).withResponse();
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.id).toMatch(/^resp_/);
    expect(compacted.output.map((i) => [i.type, (i as { role?: string }).role])).toEqual([
      ['message', 'user'],
      ['message', 'user'],
      ['compaction', undefined],
    ]);
    expect(compacted.output[0]).toMatchObject({ content: [{ type: 'input_text', text: 'My name is Zed and I live in Lima.' }] });
    const item = compacted.output[2] as unknown as OpenAI.Responses.ResponseCompactionItem;
    expect(item.id).toMatch(/^cmp_/);
    expect(item.encrypted_content).not.toContain('Switchyard');
    expect(compacted.usage.input_tokens).toBeGreaterThan(0);
    expect(compacted.usage.output_tokens).toBeGreaterThan(0);
    expect(await bodyErrors('compactResponse', 200, compacted)).toEqual([]);

    // The model was given the whole conversation, then asked to compact it.
    expect(upstreamTexts(0)).toEqual(['My name is Zed and I live in Lima.', 'Nice to meet you, Zed.', 'Remember both.', COMPACTION_PROMPT]);
    expect(JSON.stringify(sdk.fake.requests[0].body)).toContain('Be brief.');

    // Billed as any response: its cost in the body and the header, and on the account's usage.
    const cost = (compacted.usage as { cost?: number }).cost!;
    expect(cost).toBeGreaterThan(0);
    expect(Number(response.headers.get('x-switchyard-cost'))).toBe(cost);
    await sdk.gw.ledger.settled();
    const record = await sdk.gw.ledger.db
      .selectFrom('usage_records')
      .select(['cost', 'output_tokens', 'status'])
      .where('request_id', '=', response.headers.get('x-request-id')!)
      .executeTakeFirstOrThrow();
    expect([nanosToUsd(BigInt(record.cost)), Number(record.output_tokens), record.status]).toEqual([response.headers.get('x-switchyard-cost'), compacted.usage.output_tokens, 'ok']);
  });

  it('the compacted output as the next input gives the model the summary in place of the conversation', async () => {
    sdk.fake.setScenario({ words: 6 });
    const compacted = await sdk.openai.responses.compact({ model, input: conversation });
    sdk.fake.setScenario({ words: 3 });
    await sdk.openai.responses.create({ model, input: [...(compacted.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'Where do I live?' }] });
    const texts = upstreamTexts(1);
    expect(texts.slice(0, 2)).toEqual(['My name is Zed and I live in Lima.', 'Remember both.']);
    // The fake model's six words were the summary.
    expect(texts[2]).toBe('Summary of the earlier conversation, which was compacted:\n\nSwitchyard routes tokens through many models');
    expect(texts.at(-1)).toBe('Where do I live?');
    expect(texts).not.toContain('Nice to meet you, Zed.');
    expect(JSON.stringify(sdk.fake.requests[1].body)).not.toContain('swy-compaction');
  });

  it('compacts a stored conversation named by previous_response_id and item_reference', async () => {
    sdk.fake.setScenario({ words: 4 });
    const first = await sdk.openai.responses.create({ model, input: 'My name is Zed.' });
    const compacted = await sdk.openai.responses.compact({
      model,
      previous_response_id: first.id,
      input: [{ type: 'item_reference', id: first.output[0].id! }, { role: 'user', content: 'And I like tea.' }],
    });
    expect(compacted.output.filter((i) => i.type === 'message').map((i) => (i as { content: Array<{ text: string }> }).content[0].text)).toEqual([
      'My name is Zed.',
      'And I like tea.',
    ]);
    // The stored turn (its input, its answer), the referenced answer again, the new message, the request to compact.
    const texts = upstreamTexts(1);
    expect([texts[0], ...texts.slice(-2)]).toEqual(['My name is Zed.', 'And I like tea.', COMPACTION_PROMPT]);
    expect(texts.slice(1, -2).join('')).toBe(first.output_text.repeat(2));
  });

  it('nothing to compact is a 400 naming input; an unknown previous response a 404; neither reaches the model', async () => {
    const empty = await sdk.openai.responses.compact({ model }).catch((e) => e);
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError);
    expect(empty.error).toMatchObject({ param: 'input', message: expect.stringContaining('Nothing to compact') });
    const unknown = await sdk.openai.responses.compact({ model, previous_response_id: 'resp_nope' }).catch((e) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.error).toMatchObject({ param: 'previous_response_id' });
    expect(sdk.fake.requests).toHaveLength(0);
  });
});
