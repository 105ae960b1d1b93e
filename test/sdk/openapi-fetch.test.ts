/**
 * The contract as a generated SDK sees it: openapi-fetch-program.ts (typed by openapi-typescript
 * from generated/openapi.yaml, type-checked under `strict` by `make lint`) runs against the real
 * server, every operation of the document once, and one streamed call read by event type.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DOCUMENT_PATH } from '../../src/http/openapi-document.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { runProgram } from './openapi-fetch-program.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw?.close());

const SUCCESS: Record<string, number> = { adminCreateAccount: 201, adminCreateKey: 201 };

it('an openapi-fetch client calls every operation of the document and reads a stream by event type', async () => {
  const { outcomes, streamedText, eventTypes } = await runProgram({ baseUrl: gw.url, clientKey: gw.key, adminKey: gw.adminKey });
  const document = parse(readFileSync(DOCUMENT_PATH, 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId).filter((id): id is string => !!id));
  expect(Object.keys(outcomes).sort()).toEqual(operations.sort());
  for (const id of operations) expect(outcomes[id], id).toBe(SUCCESS[id] ?? 200);
  expect(eventTypes[0]).toBe('message_start');
  expect(eventTypes.at(-1)).toBe('message_stop');
  expect(streamedText.length).toBeGreaterThan(0);
});
