import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../ir/index.js';
import { compactedResponse, compactionRequest, decodeCompaction, encodeCompaction } from './compaction.js';

const conversation = [
  { role: 'user', content: 'My name is Zed.' },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi Zed.' }] },
];
const answer = (text: string, status = 'completed', extra: object = {}) => ({
  id: 'resp_1',
  created_at: 1,
  status,
  output: text === '' ? [] : [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }],
  usage: { input_tokens: 9, output_tokens: 3 },
  ...extra,
});

/** The GatewayError `f` throws. */
function thrown(f: () => unknown): GatewayError {
  try {
    f();
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error('expected an error');
}

describe('compaction', () => {
  it('the compacted response keeps the user messages, then the summary as an opaque compaction item', () => {
    const r = compactedResponse(answer('Zed introduced himself.'), conversation, 'req1');
    expect(r).toMatchObject({ id: 'resp_1', object: 'response.compaction', created_at: 1, usage: { input_tokens: 9, output_tokens: 3 } });
    const output = r.output as Array<Record<string, unknown>>;
    expect(output[0]).toEqual({ id: 'msg_req1_u0', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'My name is Zed.' }] });
    expect(output[1]).toMatchObject({ id: 'cmp_req1', type: 'compaction' });
    expect(output[1].encrypted_content).not.toContain('Zed');
    expect(decodeCompaction(output[1].encrypted_content)).toBe('Summary of the earlier conversation, which was compacted:\n\nZed introduced himself.');
  });

  it('no summary, or a summary cut by the output ceiling, is a 502: the conversation is not compacted', () => {
    expect(thrown(() => compactedResponse(answer(''), conversation, 'req1'))).toMatchObject({ kind: 'bad_gateway', message: expect.stringContaining('no summary') });
    const cut = thrown(() => compactedResponse(answer('Zed intro', 'incomplete', { incomplete_details: { reason: 'max_output_tokens' } }), conversation, 'req1'));
    expect(cut).toMatchObject({ kind: 'bad_gateway', message: expect.stringContaining('max_output_tokens') });
  });

  it("the model call carries the routing fields and asks for the summary last; another server's items are not read", () => {
    const body = compactionRequest({ model: 'm', instructions: 'Be brief.', fast: true, store: true, stream: true, tools: [] }, conversation);
    expect(body).toMatchObject({ model: 'm', instructions: 'Be brief.', fast: true, store: false, stream: false });
    expect(body).not.toHaveProperty('tools');
    expect((body.input as unknown[]).length).toBe(3);
    expect(thrown(() => compactionRequest({ model: 'm' }, []))).toMatchObject({ kind: 'invalid_request', param: 'input' });
    expect(decodeCompaction('gAAAA-openai')).toBeUndefined();
    expect(decodeCompaction(encodeCompaction('é ✓'))).toContain('é ✓');
  });
});
