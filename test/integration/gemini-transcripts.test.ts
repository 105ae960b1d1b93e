/**
 * Every recorded Gemini transcript (the reference folder's google-gemini recordings) replayed by
 * the fake upstream through the real gateway to every client protocol, streamed and not: the
 * client's answer validates against our spec and the protocol's official schema, and carries the
 * transcript's content (text, thought summaries, function calls), read from the recording by hand.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptsDir, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { geminiCatalog } from '../support/gemini-catalog.js';
import { startFakeGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';
import { REFERENCE_PRESENT, reportSkippedWithoutReference } from '../support/reference.js';
import { expectReplayed, type Content } from './cross-extract.js';
import { CLIENT_PROTOCOLS, loadSpec, post, sampleBody } from './cross-support.js';

const DIR = path.join(transcriptsDir(), 'google-gemini');
/** Vertex's streamed arguments answer `streamFunctionCallArguments`, which the gateway never asks for. */
const NOT_REQUESTED = new Set(['stream-vertex-function-call-partial-args.jsonl']);

let started: FakeGateway | undefined;
let fake: FakeUpstream;
let gw: TestGateway;

/** The recorded responses of a transcript: a JSON body, a JSON array stream, or SSE `data:` lines. */
function responses(file: string): any[] {
  const text = readFileSync(path.join(DIR, file), 'utf8');
  if (file.endsWith('.sse')) return text.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
  return ([] as any[]).concat(JSON.parse(text));
}

/** What the recording says: answer text, thought text, and the function calls with their arguments. */
function recordedContent(file: string): Content {
  const c: Content = { text: '', reasoning: '', tools: [] };
  for (const r of responses(file)) {
    for (const part of r.candidates?.[0]?.content?.parts ?? []) {
      if (part.thought === true) c.reasoning += part.text ?? '';
      else if (typeof part.text === 'string') c.text += part.text;
      else if (part.functionCall?.name) c.tools.push({ name: part.functionCall.name, args: JSON.stringify(part.functionCall.args ?? {}) });
    }
  }
  return c;
}

reportSkippedWithoutReference('every recorded Gemini transcript through every client protocol');
describe.skipIf(!REFERENCE_PRESENT)('every recorded Gemini transcript through every client protocol', () => {
  beforeAll(async () => {
    await loadSpec();
    started = await startFakeGateway((f) => ({ catalog: geminiCatalog(f) }));
    ({ fake, gw } = started);
  });
  afterAll(() => started?.close());

  const files = REFERENCE_PRESENT
    ? readdirSync(DIR, { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.(json|sse|jsonl)$/.test(f) && !f.endsWith('.request.json') && !NOT_REQUESTED.has(f))
        .sort()
    : [];
  for (const file of files) {
    const status = Number(/error-(\d{3})-/.exec(path.basename(file))?.[1] ?? 200);
    for (const protocol of CLIENT_PROTOCOLS) {
      for (const stream of [true, false]) {
        it(`${file} -> ${protocol} ${stream ? 'stream' : 'json'}`, async () => {
          fake.reset();
          fake.script(`transcript:google-gemini/${file}`);
          const a = await post(gw.url, gw.key, protocol, sampleBody(protocol, 'gm', stream));
          expect(fake.requests.map((r) => r.path)).toEqual([`/v1beta/models/gemini-2.5-flash:${stream ? 'streamGenerateContent' : 'generateContent'}`]);
          expectReplayed(protocol, a, status, stream, recordedContent(file));
        });
      }
    }
  }
});
