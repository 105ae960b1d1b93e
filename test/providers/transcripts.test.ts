import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/ir/index.js';
import { anthropicProvider } from '../../src/providers/anthropic/index.js';
import { openaiProvider } from '../../src/providers/openai/index.js';
import { closeAgents } from '../../src/providers/transport/index.js';
import type { Provider } from '../../src/providers/types.js';
import { startFakeUpstream, type FakeUpstream } from '../../tools/fake-upstream/index.js';
import { TRANSCRIPTS, assertWellFormed, drainSettled, makeCall, providerConfig } from './helpers.js';
import { REFERENCE_PRESENT, reportSkippedWithoutReference } from '../support/reference.js';

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(async () => {
  await closeAgents();
  await fake.close();
});

function listTranscripts(folder: string): string[] {
  const dir = path.join(TRANSCRIPTS, folder);
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(path.join(d, f)).isDirectory() ? walk(path.join(d, f)) : [path.join(d, f)]));
  return walk(dir)
    .map((f) => path.relative(TRANSCRIPTS, f))
    .filter((f) => !f.endsWith('.request.json'))
    .sort();
}

const cases: Array<{ folder: string; type: 'openai' | 'anthropic'; provider: Provider; base: (url: string) => string }> = [
  { folder: 'openai-chat', type: 'openai', provider: openaiProvider, base: (u) => `${u}/v1` },
  { folder: 'anthropic-messages', type: 'anthropic', provider: anthropicProvider, base: (u) => u },
];

/** One IR event per line: its type, then its other fields as JSON. */
const eventLine = ({ type, ...rest }: { type: string }) => `${type} ${JSON.stringify(rest)}`;
const requestBodies = new Map<string, unknown>();

reportSkippedWithoutReference('every recorded transcript replayed by the providers');
for (const c of REFERENCE_PRESENT ? cases : []) {
  describe(`${c.type} provider replays every ${c.folder} transcript over HTTP`, () => {
    for (const file of listTranscripts(c.folder)) {
      it(file, async () => {
        fake.reset();
        const cfg = providerConfig(c.type, c.base(fake.url), { headers: { 'x-fake-scenario': `transcript:${file}` } });
        const { events, error } = await drainSettled(c.provider, makeCall(cfg));
        expect(fake.requests).toHaveLength(1);
        // The same call every time: its body is snapshotted once per provider (below).
        expect(fake.requests[0].body).toEqual(requestBodies.get(c.type) ?? requestBodies.set(c.type, fake.requests[0].body).get(c.type));
        if (path.basename(file).startsWith('error-')) {
          expect(error).toBeInstanceOf(GatewayError);
          const status = Number(/error-(\d{3})/.exec(file)![1]);
          expect((error as GatewayError).status).toBe(status);
          expect((error as GatewayError).retryable).toBe(false);
          expect({ kind: (error as GatewayError).kind, message: (error as GatewayError).message, code: (error as GatewayError).code }).toMatchSnapshot('error');
          return;
        }
        expect(error).toBeUndefined();
        assertWellFormed(events);
        expect(events.map(eventLine)).toMatchSnapshot('ir events');
      });
    }
  });
}

describe.skipIf(!REFERENCE_PRESENT)('the request each provider sends for the replayed call', () => {
  for (const c of cases) {
    it(c.type, () => {
      expect(JSON.stringify(requestBodies.get(c.type))).toMatchSnapshot();
    });
  }
});
