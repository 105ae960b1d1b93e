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
import { expectReplayed, type Content } from './cross-extract.js';
import { CLIENT_PROTOCOLS, loadSpec, post, sampleBody } from './cross-support.js';

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

/** What a Converse recording says: its message's blocks, or its stream's deltas. */
function converseContent(file: string): Content {
  const full = path.join(DIR, file);
  const c: Content = { text: '', reasoning: '', tools: [] };
  if (file.endsWith('.json')) {
    for (const b of JSON.parse(readFileSync(full, 'utf8')).output.message.content) {
      if (typeof b.text === 'string') c.text += b.text;
      if (b.reasoningContent?.reasoningText) c.reasoning += b.reasoningContent.reasoningText.text;
      if (b.toolUse) c.tools.push({ name: b.toolUse.name, args: JSON.stringify(b.toolUse.input) });
    }
    return c;
  }
  const tools: Record<number, { name: string; args: string }> = {};
  for (const ev of framePayloads(full)) {
    if (ev.start?.toolUse) tools[ev.contentBlockIndex] = { name: ev.start.toolUse.name, args: '' };
    const d = ev.delta;
    if (!d) continue;
    if (typeof d.text === 'string') c.text += d.text;
    if (typeof d.reasoningContent?.text === 'string') c.reasoning += d.reasoningContent.text;
    if (typeof d.toolUse?.input === 'string') tools[ev.contentBlockIndex].args += d.toolUse.input;
  }
  c.tools = Object.values(tools);
  return c;
}

/** The Anthropic events or message a recording holds, and what they say. */
function recordedContent(file: string): Content {
  if (file.startsWith('converse-')) return converseContent(file);
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

reportSkippedWithoutReference('every recorded Bedrock transcript (InvokeModel and Converse) through every client protocol');
describe.skipIf(!REFERENCE_PRESENT)('every recorded Bedrock transcript (InvokeModel and Converse) through every client protocol', () => {
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

  // The vercel/ai decoded-JSON form of a Converse stream is not a wire body.
  const files = REFERENCE_PRESENT ? readdirSync(DIR).filter((f) => /^(invoke-|converse-|error-)/.test(f) && /\.(json|eventstream)$/.test(f) && !f.endsWith('.request.json')).sort() : [];
  for (const file of files) {
    const status = Number(/^error-(\d{3})-/.exec(file)?.[1] ?? 200);
    for (const protocol of CLIENT_PROTOCOLS) {
      for (const stream of [true, false]) {
        it(`${file} -> ${protocol} ${stream ? 'stream' : 'json'}`, async () => {
          fake.reset();
          fake.script(`transcript:bedrock/${file}`);
          const converse = file.startsWith('converse-');
          const a = await post(gw.url, gw.key, protocol, sampleBody(protocol, converse ? 'bdc' : 'bd', stream));
          const action = converse ? (stream ? 'converse-stream' : 'converse') : stream ? 'invoke-with-response-stream' : 'invoke';
          expect(fake.requests.map((r) => r.path)).toEqual([`/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/${action}`]);
          expectReplayed(protocol, a, status, stream, recordedContent(file));
        });
      }
    }
  }
});
