import { beforeAll, describe, expect, it } from 'vitest';
import { checkStream } from './check-stream.js';
import { loadContract, type Contract } from './load-contract.js';
import { checkErrorShape } from './check-response.js';

let contract: Contract;
beforeAll(async () => {
  contract = await loadContract();
});

const chunk = (fields: object) => ({ data: JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', ...fields }) });
const msg = (type: string, fields: object = {}) => ({ event: type, data: JSON.stringify({ type, ...fields }) });

describe('checkStream', () => {
  it('accepts a well-formed chat stream and flags a missing [DONE] or output after finish', () => {
    const ok = [chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] }), chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }), { data: '[DONE]' }];
    expect(checkStream(contract, 'openai-chat', ok)).toEqual([]);
    expect(checkStream(contract, 'openai-chat', ok.slice(0, 2)).join()).toContain('[DONE]');
    const late = [ok[1], ok[0], ok[2]];
    expect(checkStream(contract, 'openai-chat', [...late.slice(0, 1), chunk({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] }), ok[2]]).join()).toContain('after its finish_reason');
  });

  it('flags messages events out of order and bad event payloads', () => {
    const start = msg('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } } });
    const blockStart = msg('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    const delta = msg('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'x' } });
    const stop = msg('content_block_stop', { index: 0 });
    const mdelta = msg('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
    const end = msg('message_stop');
    expect(checkStream(contract, 'anthropic-messages', [start, blockStart, delta, stop, mdelta, end])).toEqual([]);
    expect(checkStream(contract, 'anthropic-messages', [start, delta, blockStart, stop, mdelta, end])).not.toEqual([]);
    expect(checkStream(contract, 'anthropic-messages', [start, blockStart, delta, mdelta, end])).not.toEqual([]);
    expect(checkStream(contract, 'anthropic-messages', [start, blockStart, msg('content_block_delta', { index: 0, delta: { type: 'text_delta' } }), stop, mdelta, end]).join()).toContain('MessageStreamEvent');
  });

  it('tells the two error shapes apart', () => {
    expect(checkErrorShape('openai', { error: { message: 'm', type: 't', param: null, code: null } })).toEqual([]);
    expect(checkErrorShape('anthropic', { error: { message: 'm', type: 't', param: null, code: null } })).not.toEqual([]);
    expect(checkErrorShape('anthropic', { type: 'error', error: { type: 'not_found_error', message: 'm' } })).toEqual([]);
  });
});
