/**
 * Every recorded Bedrock transcript (the reference folder's bedrock recordings) replayed by the
 * fake upstream through the real gateway to every client protocol, streamed and not: the
 * client's answer validates against our spec and the protocol's official schema, and carries the
 * transcript's content (text, thinking, tool calls), read from the recording by hand (event-stream
 * frames split by their length prefix, payloads base64-decoded here, not by the gateway's code).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptsDir, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { bedrockCatalog, TEST_AWS_CREDENTIALS, useTestAwsCredentials } from '../support/bedrock-catalog.js';
import { startFakeGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';
import { REFERENCE_PRESENT, reportSkippedWithoutReference } from '../support/reference.js';
import { answerContent, comparable, type Content } from './cross-extract.js';
import { CLIENT_PROTOCOLS, bodyProblems, loadSpec, post, sampleBody, streamProblems } from './cross-support.js';

const DIR = path.join(transcriptsDir(), 'bedrock');

let started: FakeGateway | undefined;
let restoreEnv: (() => void) | undefined;
let fake: FakeUpstream;
let gw: TestGateway;

/** The JSON payload of every frame of a recorded event stream. */
function framePayloads(file: string): any[] {
  const bytes = readFileSync(file);
  const out: any[] = [];
  for (let at = 0; at < bytes.length; ) {
    const total = bytes.readUInt32BE(at);
    const headers = bytes.readUInt32BE(at + 4);
    out.push(JSON.parse(bytes.subarray(at + 12 + headers, at + total - 4).toString('utf8')));
    at += total;
  }
  return out;
}

/** The Anthropic events or message a recording holds, and what they say. */
function recordedContent(file: string): Content {
  const full = path.join(DIR, file);
  const c: Content = { text: '', reasoning: '', tools: [] };
  if (file.endsWith('.json')) {
    for (const b of JSON.parse(readFileSync(full, 'utf8')).content ?? []) {
      if (b.type === 'text') c.text += b.text;
      if (b.type === 'thinking') c.reasoning += b.thinking;
      if (b.type === 'tool_use') c.tools.push({ name: b.name, args: JSON.stringify(b.input) });
    }
    return c;
  }
  const tools: Record<number, { name: string; args: string }> = {};
  for (const payload of framePayloads(full)) {
    const ev = JSON.parse(Buffer.from(payload.bytes, 'base64').toString('utf8'));
    if (ev.type === 'content_block_start' && ev.content_block.type === 'tool_use') tools[ev.index] = { name: ev.content_block.name, args: '' };
    if (ev.type !== 'content_block_delta') continue;
    if (ev.delta.type === 'text_delta') c.text += ev.delta.text;
    if (ev.delta.type === 'thinking_delta') c.reasoning += ev.delta.thinking;
    if (ev.delta.type === 'input_json_delta') tools[ev.index].args += ev.delta.partial_json;
  }
  c.tools = Object.values(tools);
  return c;
}

reportSkippedWithoutReference('every recorded Bedrock InvokeModel transcript through every client protocol');
describe.skipIf(!REFERENCE_PRESENT)('every recorded Bedrock InvokeModel transcript through every client protocol', () => {
  beforeAll(async () => {
    await loadSpec();
    restoreEnv = useTestAwsCredentials();
    started = await startFakeGateway((f) => ({ catalog: bedrockCatalog(f) }), { awsCredentials: TEST_AWS_CREDENTIALS });
    ({ fake, gw } = started);
  });
  afterAll(async () => {
    await started?.close();
    restoreEnv?.();
  });

  const files = REFERENCE_PRESENT ? readdirSync(DIR).filter((f) => /^(invoke-|error-)/.test(f) && !f.endsWith('.request.json')).sort() : [];
  for (const file of files) {
    const status = Number(/^error-(\d{3})-/.exec(file)?.[1] ?? 200);
    for (const protocol of CLIENT_PROTOCOLS) {
      for (const stream of [true, false]) {
        it(`${file} -> ${protocol} ${stream ? 'stream' : 'json'}`, async () => {
          fake.reset();
          fake.script(`transcript:bedrock/${file}`);
          const a = await post(gw.url, gw.key, protocol, sampleBody(protocol, 'bd', stream));
          expect(fake.requests.map((r) => r.path)).toEqual([`/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/${stream ? 'invoke-with-response-stream' : 'invoke'}`]);
          if (status !== 200) {
            expect(a.status).toBe(status);
            expect(bodyProblems(protocol, a.status, a.json)).toEqual([]);
            return;
          }
          expect(a.status, a.text).toBe(200);
          if (stream) expect(streamProblems(protocol, a.frames)).toEqual([]);
          else expect(bodyProblems(protocol, 200, a.json)).toEqual([]);
          expect(comparable(answerContent(protocol, a))).toEqual(comparable(recordedContent(file)));
        });
      }
    }
  }
});
