import type { WireProtocol } from './wires/wire.js';

/** A generated answer: `count` word chunks, cut at max_tokens unless told to ignore it. */
export interface GenerateInput {
  protocol: WireProtocol;
  body: Record<string, unknown>;
  words: number;
  ignoreMaxTokens: boolean;
  /** Answer with this text instead of generated words, and/or end with this tool call (see agent.ts). */
  answer?: { text?: string; toolCall?: ToolCall; thinking?: Thinking };
}

/** A signed thinking block before the answer (Anthropic's protocol); on Gemini's, only its signature, on the function call's part. */
export interface Thinking {
  text: string;
  signature: string;
}

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

const VOCAB = ['Switchyard', 'routes', 'tokens', 'through', 'many', 'models', 'and', 'keeps', 'every', 'ledger', 'honest'];

interface Plan {
  model: string;
  chunks: string[];
  truncated: boolean;
  inputTokens: number;
  toolCall?: ToolCall;
  thinking?: Thinking;
}

function plan(input: GenerateInput): Plan {
  const b = input.body;
  const limit = num(b.max_tokens) ?? num(b.max_completion_tokens) ?? num(b.max_output_tokens);
  const count = input.ignoreMaxTokens || limit === undefined ? input.words : Math.min(input.words, limit);
  const given = input.answer?.text?.split(/(?<= )/);
  const chunks = given ?? Array.from({ length: count }, (_, i) => `${i === 0 ? '' : ' '}${VOCAB[i % VOCAB.length]}`);
  const prompt = JSON.stringify(b.messages ?? b.input ?? '') + JSON.stringify(b.system ?? '');
  return {
    model: typeof b.model === 'string' ? b.model : 'fake-model',
    chunks,
    truncated: !given && count < input.words,
    inputTokens: Math.max(1, Math.ceil(prompt.length / 4)),
    toolCall: input.answer?.toolCall,
    thinking: input.answer?.thinking,
  };
}

const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** The generated answer as SSE event texts. */
export function generateEvents(input: GenerateInput): string[] {
  const p = plan(input);
  if (input.protocol === 'anthropic-messages') return anthropicEvents(p);
  if (input.protocol === 'openai-responses') return responsesEvents(p);
  if (input.protocol === 'google-gemini') return geminiChunks(p, true).map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`);
  const includeUsage = (input.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  return chatEvents(p, includeUsage);
}

function chatEvents(p: Plan, includeUsage: boolean): string[] {
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: p.model };
  const choice = (delta: unknown, finish: string | null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out = [sse(choice({ role: 'assistant', content: '' }, null))];
  for (const c of p.chunks) out.push(sse(choice({ content: c }, null)));
  const call = p.toolCall;
  if (call) {
    out.push(sse(choice({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null)));
    out.push(sse(choice({ tool_calls: [{ index: 0, function: { arguments: call.arguments } }] }, null)));
  }
  out.push(sse(choice({}, finishOf(p, 'tool_calls', 'length', 'stop'))));
  if (includeUsage) {
    const usage = { prompt_tokens: p.inputTokens, completion_tokens: p.chunks.length, total_tokens: p.inputTokens + p.chunks.length };
    out.push(sse({ ...base, choices: [], usage }));
  }
  out.push('data: [DONE]\n\n');
  return out;
}

function anthropicEvents(p: Plan): string[] {
  const message = { id: 'msg_fake', type: 'message', role: 'assistant', model: p.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: p.inputTokens, output_tokens: 1 } };
  const out = [sse({ type: 'message_start', message }, 'message_start')];
  let index = 0;
  const block = (start: unknown, deltas: unknown[]) => {
    out.push(sse({ type: 'content_block_start', index, content_block: start }, 'content_block_start'));
    if (index === 0) out.push(sse({ type: 'ping' }, 'ping'));
    for (const delta of deltas) out.push(sse({ type: 'content_block_delta', index, delta }, 'content_block_delta'));
    out.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'));
    index++;
  };
  if (p.thinking) {
    block({ type: 'thinking', thinking: '', signature: '' }, [{ type: 'thinking_delta', thinking: p.thinking.text }, { type: 'signature_delta', signature: p.thinking.signature }]);
  }
  block({ type: 'text', text: '' }, p.chunks.map((c) => ({ type: 'text_delta', text: c })));
  const call = p.toolCall;
  if (call) block({ type: 'tool_use', id: call.id, name: call.name, input: {} }, [{ type: 'input_json_delta', partial_json: call.arguments }]);
  const delta = { stop_reason: finishOf(p, 'tool_use', 'max_tokens', 'end_turn'), stop_sequence: null };
  out.push(sse({ type: 'message_delta', delta, usage: { output_tokens: p.chunks.length } }, 'message_delta'));
  out.push(sse({ type: 'message_stop' }, 'message_stop'));
  return out;
}

function responsesEvents(p: Plan): string[] {
  const text = p.chunks.join('');
  const item = { id: 'msg_fake', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
  const done = responseObject(p, p.toolCall ? [item, functionCallItem(p.toolCall)] : [item]);
  const created = { ...done, status: 'in_progress', output: [], usage: null, incomplete_details: null };
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => sse({ type, sequence_number: seq++, ...data }, type);
  const out = [
    ev('response.created', { response: created }),
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }),
    ev('response.content_part.added', { item_id: 'msg_fake', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
  ];
  for (const c of p.chunks) out.push(ev('response.output_text.delta', { item_id: 'msg_fake', output_index: 0, content_index: 0, delta: c }));
  out.push(ev('response.output_text.done', { item_id: 'msg_fake', output_index: 0, content_index: 0, text }));
  out.push(ev('response.content_part.done', { item_id: 'msg_fake', output_index: 0, content_index: 0, part: item.content[0] }));
  out.push(ev('response.output_item.done', { output_index: 0, item }));
  const call = p.toolCall && functionCallItem(p.toolCall);
  if (call) {
    out.push(ev('response.output_item.added', { output_index: 1, item: { ...call, arguments: '', status: 'in_progress' } }));
    out.push(ev('response.function_call_arguments.delta', { item_id: call.id, output_index: 1, delta: call.arguments }));
    out.push(ev('response.function_call_arguments.done', { item_id: call.id, output_index: 1, arguments: call.arguments }));
    out.push(ev('response.output_item.done', { output_index: 1, item: call }));
  }
  out.push(ev(p.truncated ? 'response.incomplete' : 'response.completed', { response: done }));
  return out;
}

function responseObject(p: Plan, output: unknown[]): Record<string, unknown> {
  return {
    id: 'resp_fake',
    object: 'response',
    created_at: 1700000000,
    status: p.truncated ? 'incomplete' : 'completed',
    incomplete_details: p.truncated ? { reason: 'max_output_tokens' } : null,
    model: p.model,
    output,
    usage: {
      input_tokens: p.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: p.chunks.length,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: p.inputTokens + p.chunks.length,
    },
  };
}

/** The generated answer as a non-streamed JSON body. */
export function generateJson(input: GenerateInput): Record<string, unknown> {
  const p = plan(input);
  const text = p.chunks.join('');
  if (input.protocol === 'anthropic-messages') {
    return {
      id: 'msg_fake', type: 'message', role: 'assistant', model: p.model,
      content: [
        ...(p.thinking ? [{ type: 'thinking', thinking: p.thinking.text, signature: p.thinking.signature }] : []),
        { type: 'text', text },
        ...(p.toolCall ? [{ type: 'tool_use', id: p.toolCall.id, name: p.toolCall.name, input: JSON.parse(p.toolCall.arguments) as unknown }] : [])],
      stop_reason: finishOf(p, 'tool_use', 'max_tokens', 'end_turn'), stop_sequence: null,
      usage: { input_tokens: p.inputTokens, output_tokens: p.chunks.length },
    };
  }
  if (input.protocol === 'google-gemini') return geminiChunks(p, false)[0];
  if (input.protocol === 'openai-responses') {
    const message = { id: 'msg_fake', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
    return responseObject(p, p.toolCall ? [message, functionCallItem(p.toolCall)] : [message]);
  }
  return {
    id: 'chatcmpl-fake', object: 'chat.completion', created: 1700000000, model: p.model,
    choices: [{ index: 0, message: chatMessage(text, p.toolCall), finish_reason: finishOf(p, 'tool_calls', 'length', 'stop') }],
    usage: { prompt_tokens: p.inputTokens, completion_tokens: p.chunks.length, total_tokens: p.inputTokens + p.chunks.length },
  };
}

/**
 * Gemini `GenerateContentResponse`s: a stream's word chunks, then the last one carrying the
 * function call, `finishReason` and usage (each chunk repeats the usage so far, as Gemini does);
 * a whole answer is one response with every part.
 */
function geminiChunks(p: Plan, streamed: boolean): Array<Record<string, unknown>> {
  const usage = (n: number) => ({ promptTokenCount: p.inputTokens, candidatesTokenCount: n, totalTokenCount: p.inputTokens + n });
  const response = (parts: unknown[], n: number, finishReason?: string) => ({
    candidates: [{ content: { parts, role: 'model' }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    usageMetadata: usage(n), modelVersion: p.model, responseId: 'fake-gemini-response',
  });
  const signed = p.thinking ? { thoughtSignature: p.thinking.signature } : {};
  const call = p.toolCall ? [{ functionCall: { name: p.toolCall.name, args: JSON.parse(p.toolCall.arguments) as unknown }, ...signed }] : [];
  const finish = p.truncated ? 'MAX_TOKENS' : 'STOP';
  if (!streamed) return [response([{ text: p.chunks.join('') }, ...call], p.chunks.length, finish)];
  return [...p.chunks.map((c, i) => response([{ text: c }], i + 1)), response(call, p.chunks.length, finish)];
}

function finishOf(p: Plan, tool: string, cut: string, stop: string): string {
  return p.toolCall ? tool : p.truncated ? cut : stop;
}

function chatMessage(text: string, call: ToolCall | undefined): Record<string, unknown> {
  const toolCalls = call ? { tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] } : {};
  return { role: 'assistant', content: text, refusal: null, ...toolCalls };
}

function functionCallItem(call: ToolCall): { id: string; type: 'function_call'; status: string; call_id: string; name: string; arguments: string } {
  return { id: `fc_${call.id}`, type: 'function_call', status: 'completed', call_id: call.id, name: call.name, arguments: call.arguments };
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}
