/**
 * Every recorded upstream transcript (OpenAI chat and Anthropic messages) replayed by the fake
 * upstream through the real gateway, to every client protocol (chat, messages, responses),
 * streamed and not: the client's answer validates against our spec and the provider's official
 * schema, carries the transcript's content, and the upstream got the request we expect.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptsDir, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { fakeCatalog } from '../support/fake-catalog.js';
import { startFakeGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';
import { answerContent, answerOutline, comparable, transcriptContent } from './cross-extract.js';
import { CLIENT_PROTOCOLS, bodyProblems, loadSpec, normalise, post, sampleBody, streamProblems, type Answer, type ClientProtocol } from './cross-support.js';
import { REFERENCE_PRESENT, reportSkippedWithoutReference } from '../support/reference.js';

const ROOT = transcriptsDir();
let started: FakeGateway | undefined;
let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  await loadSpec();
  started = await startFakeGateway((f) => ({ catalog: fakeCatalog(f, { maxRetries: 0 }) }));
  ({ fake, gw } = started);
});
afterAll(() => started?.close());

function listTranscripts(folder: string): string[] {
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(path.join(d, f)).isDirectory() ? walk(path.join(d, f)) : [path.join(d, f)]));
  return walk(path.join(ROOT, folder))
    .map((f) => path.relative(ROOT, f))
    .filter((f) => !f.endsWith('.request.json'))
    .sort();
}

const UPSTREAMS = [
  { folder: 'openai-chat', model: 'up-openai', upstreamModel: 'gpt-4o-mini', path: '/v1/chat/completions' },
  { folder: 'anthropic-messages', model: 'up-anthropic', upstreamModel: 'claude-sonnet-4-5', path: '/v1/messages' },
];

async function replay(file: string, protocol: ClientProtocol, model: string, stream: boolean): Promise<Answer> {
  fake.reset();
  fake.script(`transcript:${file}`);
  return post(gw.url, gw.key, protocol, sampleBody(protocol, model, stream));
}

/** A JSON body as one line, so a snapshot holds one line per answer. */
const oneLine = (v: unknown) => JSON.stringify(normalise(v));

/**
 * What the upstream receives depends on the client protocol and the upstream, never on the
 * transcript replayed: it is snapshotted once per (upstream, protocol, stream) here, and every
 * replay below must send exactly that.
 */
const upstreamBodies = new Map<string, unknown>();
const bodyKey = (model: string, protocol: ClientProtocol, stream: boolean) => `${model} ${protocol} ${stream ? 'stream' : 'json'}`;

reportSkippedWithoutReference('the request each client protocol makes upstream');
describe.skipIf(!REFERENCE_PRESENT)('the request each client protocol makes upstream', () => {
  for (const up of UPSTREAMS) {
    for (const protocol of CLIENT_PROTOCOLS) {
      for (const stream of [true, false]) {
        it(bodyKey(up.model, protocol, stream), async () => {
          await replay(listTranscripts(up.folder).find((f) => path.basename(f).startsWith('stream-text'))!, protocol, up.model, stream);
          const body = fake.requests[0].body;
          upstreamBodies.set(bodyKey(up.model, protocol, stream), body);
          expect(oneLine(body)).toMatchSnapshot();
        });
      }
    }
  }
});

reportSkippedWithoutReference('every recorded transcript through every client protocol');
for (const up of REFERENCE_PRESENT ? UPSTREAMS : []) {
  for (const file of listTranscripts(up.folder)) {
    const status = Number(/error-(\d{3})-/.exec(path.basename(file))?.[1] ?? 200);
    describe(`${file} via ${up.model}`, () => {
      for (const protocol of CLIENT_PROTOCOLS) {
        for (const stream of [true, false]) {
          it(`${protocol} ${stream ? 'stream' : 'json'}`, async () => {
            const a = await replay(file, protocol, up.model, stream);
            // The upstream got one request, in its own protocol, for its own model name.
            expect(fake.requests).toHaveLength(1);
            const sent = fake.requests[0];
            expect(sent.path).toBe(up.path);
            // The upstream streams exactly when the client does (a whole answer costs one read, not
            // one per event); the recorded stream is replayed either way, so both decoders run.
            expect(sent.body).toMatchObject({ model: up.upstreamModel, stream });
            expect(sent.headers.accept).toBe(stream ? 'text/event-stream' : 'application/json');
            expect(sent.body).toEqual(upstreamBodies.get(bodyKey(up.model, protocol, stream)));

            if (status !== 200) {
              expect(a.status).toBe(status);
              expect(bodyProblems(protocol, a.status, a.json)).toEqual([]);
              expect(oneLine(a.json)).toMatchSnapshot('error body');
              return;
            }
            expect(a.status, a.text).toBe(200);
            if (stream) {
              expect(a.frames.length).toBeGreaterThan(0);
              expect(streamProblems(protocol, a.frames)).toEqual([]);
            } else {
              expect(bodyProblems(protocol, 200, a.json)).toEqual([]);
            }
            // The content is the recording's; the snapshot is the answer's outline: its parts in
            // order, how it ended, its usage (one line; each frame's shape is checked above).
            expect(comparable(answerContent(protocol, a))).toEqual(comparable(transcriptContent(ROOT, file)));
            expect(answerOutline(protocol, a)).toMatchSnapshot('outline');
          });
        }
      }
    });
  }
}
