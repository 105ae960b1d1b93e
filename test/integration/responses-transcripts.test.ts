/**
 * The recorded Responses transcripts (shared/reference/transcripts/openai-responses) against our
 * spec (`ResponseStreamEvent`, the createResponse body) and OpenAI's official schema, so the
 * shapes the gateway both emits and accepts from a Responses upstream are the real ones.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateOfficial } from '../support/official-schemas.js';
import { transcriptsDir } from '../../tools/fake-upstream/index.js';
import { bodyErrors, schemaErrors } from '../support/stream-checks.js';
import { REFERENCE_PRESENT } from '../support/reference.js';

const DIR = `${transcriptsDir()}/openai-responses`;
const files = REFERENCE_PRESENT ? readdirSync(DIR) : [];
const streams = files.filter((f) => f.endsWith('.sse') || f.endsWith('.jsonl'));
const bodies = files.filter((f) => f.endsWith('.json') && !f.endsWith('.request.json'));

function payloads(file: string): Array<Record<string, unknown>> {
  const text = readFileSync(`${DIR}/${file}`, 'utf8');
  const lines = file.endsWith('.sse') ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)) : text.split('\n');
  return lines.map((l) => l.trim()).filter(Boolean).map((l) => JSON.parse(l));
}

/**
 * Where the live API (or an older recording) and OpenAI's current schema disagree, the recording
 * wins and the schema is met by a documented adjustment, listed here and nowhere else:
 * - `usage: null` / `user: null` on unfinished responses (not nullable in the schema);
 * - the `error` event's code and message nested in `error` (the schema wants them on top);
 * - `response.error.code: "insufficient_quota"` (not in the schema's code enum);
 * - fields added to the schema after the recording: `logprobs` on output_text parts,
 *   `cache_write_tokens` in the input token details, `name` on function_call_arguments.done
 *   (taken from the item the recording announced).
 * The gateway's own events meet the schema without any of these (responses-openai-sdk.test.ts).
 */
function liveApiDrift(ev: Record<string, any>, names = new Map<string, string>()): Record<string, any> {
  const out = structuredClone(ev);
  if (out.item?.type === 'function_call') names.set(out.item.id, out.item.name);
  if (out.type === 'response.function_call_arguments.done' && out.name === undefined) out.name = names.get(out.item_id);
  const fixResponse = (r: Record<string, any> | undefined) => {
    if (!r) return;
    for (const k of ['usage', 'user']) if (r[k] === null) delete r[k];
    if (r.error?.code === 'insufficient_quota') r.error.code = 'server_error';
    if (r.usage?.input_tokens_details && r.usage.input_tokens_details.cache_write_tokens === undefined) r.usage.input_tokens_details.cache_write_tokens = 0;
    for (const item of r.output ?? []) fixItem(item);
  };
  const fixItem = (item: Record<string, any> | undefined) => {
    for (const part of item?.content ?? []) if (part.type === 'output_text' && part.logprobs === undefined) part.logprobs = [];
  };
  fixResponse(out.response);
  fixItem(out.item);
  if (out.part?.type === 'output_text' && out.part.logprobs === undefined) out.part.logprobs = [];
  if ((out.type === 'response.output_text.delta' || out.type === 'response.output_text.done') && out.logprobs === undefined) out.logprobs = [];
  if (out.type === 'error' && out.error && out.message === undefined) {
    Object.assign(out, { code: out.error.code ?? null, message: out.error.message, param: out.error.param ?? null });
  }
  return out;
}

beforeAll(async () => {
  await schemaErrors('ResponseStreamEvent', {}); // compile once, outside the timed tests
});

describe.skipIf(!REFERENCE_PRESENT)('recorded Responses transcripts', () => {
  it('covers every recording in the folder', () => {
    expect(streams.length).toBeGreaterThanOrEqual(4);
    expect(bodies.length).toBeGreaterThanOrEqual(1);
  });

  it.each(streams)('%s: every event is a valid ResponseStreamEvent, ours and official', async (file) => {
    const problems: string[] = [];
    const names = new Map<string, string>();
    for (const [i, raw] of payloads(file).entries()) {
      // Recordings from before March 2025 lack sequence_number, which both schemas (and the
      // gateway's own events) now require; it is the only field supplied here.
      const ev = 'sequence_number' in raw ? raw : { ...raw, sequence_number: i };
      problems.push(...(await schemaErrors('ResponseStreamEvent', ev)).map((e) => `#${i} ours: ${e}`));
      problems.push(...validateOfficial('openai', 'ResponseStreamEvent', liveApiDrift(ev, names)).map((e) => `#${i} official: ${e}`));
    }
    expect(problems).toEqual([]);
  });

  it.each(bodies)('%s: a valid createResponse body, ours and official', async (file) => {
    const body = JSON.parse(readFileSync(`${DIR}/${file}`, 'utf8'));
    expect(await bodyErrors('createResponse', 200, body)).toEqual([]);
    expect(validateOfficial('openai', 'Response', liveApiDrift({ response: body }).response)).toEqual([]);
  });

  it('the schemas are not vacuous: a delta without item_id or a Response without output fails', async () => {
    const bad = { type: 'response.output_text.delta', sequence_number: 1, output_index: 0, content_index: 0, delta: 'x' };
    expect(await schemaErrors('ResponseStreamEvent', bad)).not.toEqual([]);
    expect(validateOfficial('openai', 'ResponseStreamEvent', bad)).not.toEqual([]);
    const body = JSON.parse(readFileSync(`${DIR}/${bodies[0]}`, 'utf8'));
    delete body.output;
    expect(await bodyErrors('createResponse', 200, body)).not.toEqual([]);
  });
});
