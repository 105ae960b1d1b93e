// The response and event schemas accept what real providers send (shared/reference/transcripts),
// so an encoder that copies the wire shape validates, and the contract fuzzer can trust them.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPIBackend } from 'openapi-backend';
import { compileComponent, loadApi } from './load-api.js';
import { REFERENCE_PRESENT, TRANSCRIPTS_DIR } from '../tools/reference.js';

// The recorded transcripts of the reference folder (tools/reference.ts); skipped without it.
const DIR = TRANSCRIPTS_DIR;
let api: OpenAPIBackend;
beforeAll(async () => {
  api = await loadApi();
});

function json(file: string): unknown {
  return JSON.parse(readFileSync(`${DIR}/${file}`, 'utf8'));
}

/** Payloads of every `data:` line (sse) or line (jsonl), without `[DONE]`. */
function payloads(file: string, dir = DIR): unknown[] {
  const text = readFileSync(`${dir}/${file}`, 'utf8');
  const lines = file.endsWith('.sse')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim())
    : text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.filter((l) => l !== '[DONE]').map((l) => JSON.parse(l) as unknown);
}

function responseErrors(body: unknown, operationId: string, status: number): unknown {
  return api.validateResponse(body, operationId, status).errors ?? null;
}

describe.skipIf(!REFERENCE_PRESENT)('non-streaming bodies', () => {
  it.each([
    ['createChatCompletion', 200, 'openai-chat/completion-text.json'],
    ['createChatCompletion', 200, 'openai-chat/completion-tool-calls-parallel.json'],
    ['createChatCompletion', 400, 'openai-chat/error-400-invalid-request.json'],
    ['createMessage', 200, 'anthropic-messages/message-text.json'],
    ['createMessage', 200, 'anthropic-messages/message-thinking.json'],
    ['createMessage', 200, 'anthropic-messages/message-redacted-thinking.json'],
    ['createMessage', 200, 'anthropic-messages/message-text-and-tool-use-empty-input.json'],
    ['createMessage', 400, 'anthropic-messages/error-400-invalid-request.json'],
    ['createMessage', 404, 'anthropic-messages/error-404-not-found.json'],
    ['createResponse', 200, 'openai-responses/response-reasoning-summary-and-text.json'],
  ] as const)('%s %i %s', (operationId, status, file) => {
    expect(responseErrors(json(file), operationId, status)).toBeNull();
  });

  it('requires stop_sequence, which the vercel fixture message-tool-use.json trimmed', () => {
    const body = json('anthropic-messages/message-tool-use.json') as Record<string, unknown>;
    expect(responseErrors(body, 'createMessage', 200)).not.toBeNull();
    expect(responseErrors({ ...body, stop_sequence: null }, 'createMessage', 200)).toBeNull();
  });

  it('rejects an OpenAI error body missing param/code', () => {
    expect(responseErrors({ error: { message: 'x', type: 't' } }, 'createChatCompletion', 400)).not.toBeNull();
  });

  it('rejects an unknown finish_reason', () => {
    const body = json('openai-chat/completion-text.json') as { choices: { finish_reason: string }[] };
    body.choices[0].finish_reason = 'done';
    expect(responseErrors(body, 'createChatCompletion', 200)).not.toBeNull();
  });
});

describe.skipIf(!REFERENCE_PRESENT)('stream payloads', () => {
  const cases: [string, string][] = [
    ['ChatCompletionChunk', 'openai-chat/stream-text.sse'],
    ['ChatCompletionChunk', 'openai-chat/stream-tool-calls-parallel.sse'],
    ['ChatCompletionChunk', 'openai-chat/stream-deepseek-reasoning-content.sse'],
    ['ChatCompletionChunk', 'openai-chat/stream-finish-length.sse'],
    ['ChatCompletionChunk', 'openai-chat/stream-refusal.sse'],
    ['ChatCompletionChunk', 'openai-chat/stream-multiple-choices-n3.sse'],
    ['MessageStreamEvent', 'anthropic-messages/stream-text.sse'],
    ['MessageStreamEvent', 'anthropic-messages/stream-text.jsonl'],
    ['MessageStreamEvent', 'anthropic-messages/stream-thinking.sse'],
    ['MessageStreamEvent', 'anthropic-messages/stream-redacted-thinking.sse'],
    ['MessageStreamEvent', 'anthropic-messages/stream-tool-use.sse'],
    ['MessageStreamEvent', 'anthropic-messages/stream-max-tokens-in-tool-use.sse'],
    ['MessageStreamEvent', 'anthropic-messages/maintainer-authored/stream-refusal.sse'],
    // Older Responses recordings predate `sequence_number`, which the gateway always sends.
    ['ResponseStreamEvent', 'openai-responses/stream-reasoning-summary.sse'],
    ['ResponseStreamEvent', 'openai-responses/stream-error-insufficient-quota.jsonl'],
  ];
  it.each(cases)('%s accepts %s', (schema, file) => {
    const validate = compileComponent(api, schema);
    const failures = payloads(file).flatMap((p, i) => validate(p).map((e) => `#${i}: ${e}`));
    expect(failures).toEqual([]);
  });

  it('MessageStreamEvent rejects an unknown delta type', () => {
    const validate = compileComponent(api, 'MessageStreamEvent');
    expect(validate({ type: 'content_block_delta', index: 0, delta: { type: 'text', text: 'x' } })).not.toEqual([]);
  });

  it('ResponseStreamEvent requires sequence_number', () => {
    const validate = compileComponent(api, 'ResponseStreamEvent');
    expect(validate({ type: 'response.output_text.delta', item_id: 'i', output_index: 0, content_index: 0, delta: 'x' })).not.toEqual([]);
  });
});

describe("the fake upstream's scripted answers", () => {
  // Written by the project from the documented wire formats (tools/fake-upstream/scripts); they
  // must meet the same contract as what the gateway sends, reference folder or not.
  const scripts = path.join(import.meta.dirname, '../tools/fake-upstream/scripts');
  const schemaOf = (file: string) =>
    file.startsWith('openai-chat/') ? 'ChatCompletionChunk' : file.startsWith('anthropic-messages/') ? 'MessageStreamEvent' : 'ResponseStreamEvent';
  // Gemini's scripts are an upstream's wire format, which the published document does not describe:
  // test/providers/gemini.test.ts replays them through the provider instead.
  const files = readdirSync(scripts, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.sse') && !f.startsWith('google-gemini/'))
    .sort();
  it.each(files)('%s', (file) => {
    const data = payloads(file, scripts);
    const validate = compileComponent(api, schemaOf(file));
    expect(data.length).toBeGreaterThan(2);
    expect(data.flatMap((d, i) => validate(d).map((e) => `#${i}: ${e}`))).toEqual([]);
  });
});
