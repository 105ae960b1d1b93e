import { describe, expect, it } from 'vitest';
import type { ProviderCapabilities } from '../providers/types.js';
import { decodeChatRequest } from '../protocols/openai-chat/decode-request.js';
import { decodeMessagesRequest } from '../protocols/anthropic-messages/decode-request.js';
import { decodeRequest as decodeResponsesRequest } from '../protocols/openai-responses/decode-request.js';
import { droppedFeatures } from './dropped-features.js';

/** An upstream that speaks no client protocol natively and runs no server tools (Gemini's kind). */
const PLAIN: ProviderCapabilities = { thinking: { minBudget: 0, forcedToolBlocksThinking: false }, jsonMode: true, serverTools: false, signatures: { family: 'x', opaque: true } };
const CHAT: ProviderCapabilities = { ...PLAIN, nativeProtocol: 'openai-chat' };
const MESSAGES: ProviderCapabilities = { ...PLAIN, nativeProtocol: 'anthropic', serverTools: true };
/** Claude through Bedrock's InvokeModel: Anthropic's body, no server tools. */
const MESSAGES_NO_SERVER_TOOLS: ProviderCapabilities = { ...MESSAGES, serverTools: false };
const RESPONSES: ProviderCapabilities = { ...PLAIN, nativeProtocol: 'openai-responses', serverTools: true };
const RESPONSES_NO_SERVER_TOOLS: ProviderCapabilities = { ...RESPONSES, serverTools: false };

/** A Messages request with everything only an Anthropic upstream takes. */
const messages = decodeMessagesRequest(
  {
    model: 'claude-x',
    max_tokens: 100,
    top_k: 5,
    container: 'c_1',
    metadata: { user_id: 'u1' },
    reasoning_effort: 'xhigh',
    output_config: { format: { type: 'json_schema', schema: { type: 'object' } }, effort: 'high' },
    tools: [
      { name: 'get', input_schema: { type: 'object' } },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
      { type: 'code_execution_20250825', name: 'code_execution' },
    ],
    messages: [
      { role: 'user', content: 'Find it' },
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
          { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
          { type: 'text', text: 'Found.', citations: [{ type: 'web_search_result_location', url: 'https://a.test', title: 'A', encrypted_index: 'e', cited_text: 'c' }] },
        ],
      },
      { role: 'user', content: 'More' },
    ],
  },
  { 'anthropic-beta': 'context-1m-2025-08-07,interleaved-thinking-2025-05-14' },
);

const MESSAGES_ELSEWHERE = [
  'server tools dropped (the upstream is not Anthropic): web_search_20250305, code_execution_20250825',
  'fields dropped (the upstream is not Anthropic): top_k, container, output_config',
  'server tool calls dropped from the conversation (the upstream is not Anthropic): web_search',
  'citations dropped from the conversation (the upstream is not Anthropic)',
  'anthropic-beta dropped (the upstream is not Anthropic): context-1m-2025-08-07,interleaved-thinking-2025-05-14',
];

/** A Responses request with everything only a Responses upstream that runs hosted tools takes. */
const responses = decodeResponsesRequest(
  {
    model: 'gpt-x',
    tools: [
      { type: 'function', name: 'get', parameters: { type: 'object' } },
      { type: 'web_search' },
      { type: 'mcp', server_label: 's', server_url: 'https://m.test' },
      { type: 'namespace', name: 'agents', tools: [{ type: 'function', name: 'spawn' }, { type: 'custom', name: 'patch' }, { type: 'web_search' }] },
    ],
    input: [
      { role: 'user', content: 'Search' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
      { type: 'item_reference', id: 'msg_1' },
      { type: 'custom_tool_call', call_id: 'c1', name: 'patch', input: 'x' },
    ],
  },
  {},
);

const RESPONSES_ELSEWHERE = [
  'item_reference dropped (no stored responses): msg_1',
  'hosted tools dropped (the upstream is not Responses-speaking): web_search, mcp',
  'namespace tools other than functions dropped (the upstream is not Responses-speaking): agents.patch, agents.web_search',
  'input items dropped (the upstream is not Responses-speaking): web_search_call, custom_tool_call',
];

describe('droppedFeatures', () => {
  it('names what only an Anthropic upstream takes of a Messages request, for any other upstream', () => {
    expect(droppedFeatures(messages, PLAIN)).toEqual(MESSAGES_ELSEWHERE);
    expect(droppedFeatures(messages, CHAT)).toEqual(MESSAGES_ELSEWHERE);
    expect(droppedFeatures(messages, RESPONSES)).toEqual(MESSAGES_ELSEWHERE);
  });

  it('an Anthropic-speaking upstream takes all of it, and one without server tools loses only those', () => {
    expect(droppedFeatures(messages, MESSAGES)).toEqual([]);
    expect(droppedFeatures(messages, MESSAGES_NO_SERVER_TOOLS)).toEqual([MESSAGES_ELSEWHERE[0]]);
  });

  it('output_config holding only the format (which the IR carries) and metadata are not lost fields', () => {
    const r = decodeMessagesRequest({ model: 'c', max_tokens: 1, messages: [], metadata: { user_id: 'u' }, output_config: { format: { type: 'json_schema', schema: {} } } }, {});
    expect(droppedFeatures(r, PLAIN)).toEqual([]);
  });

  it('names what only a Responses upstream running hosted tools takes of a Responses request', () => {
    expect(droppedFeatures(responses, PLAIN)).toEqual(RESPONSES_ELSEWHERE);
    expect(droppedFeatures(responses, MESSAGES)).toEqual(RESPONSES_ELSEWHERE);
    expect(droppedFeatures(responses, RESPONSES_NO_SERVER_TOOLS)).toEqual(RESPONSES_ELSEWHERE);
    // An unresolved item reference reaches no upstream.
    expect(droppedFeatures(responses, RESPONSES)).toEqual([RESPONSES_ELSEWHERE[0]]);
  });

  it('a Chat request loses nothing of its bag, only formats and choices the upstream lacks', () => {
    const r = decodeChatRequest({ model: 'm', seed: 7, messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } }, {});
    expect(droppedFeatures(r, { ...PLAIN, jsonMode: false })).toEqual(['JSON mode dropped (the upstream has structured output only with a schema: use json_schema)']);
    expect(droppedFeatures(r, MESSAGES)).toEqual([]);
  });
});
