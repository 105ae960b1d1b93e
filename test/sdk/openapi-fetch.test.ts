/**
 * The contract as a generated SDK sees it: openapi-fetch-program.ts (typed by openapi-typescript
 * from generated/openapi.yaml, type-checked under `strict` by `make lint`) runs against the real
 * server, every operation of the document once, and one streamed call read by event type.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { runProgram } from './openapi-fetch-program.js';
import { documentOperationIds, successStatus, seedUser, sdkIdentity } from './sdk-support.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ identity: sdkIdentity() });
});
afterAll(async () => gw?.close());

it('an openapi-fetch client calls every operation of the document and reads a stream by event type', async () => {
  const { outcomes, streamedText, eventTypes } = await runProgram({ baseUrl: gw.url, clientKey: gw.key, adminKey: gw.adminKey, userId: await seedUser(gw) });
  const operations = documentOperationIds();
  expect(Object.keys(outcomes).sort()).toEqual(operations.sort());
  for (const id of operations) expect(outcomes[id], id).toBe(successStatus(id));
  expect(eventTypes[0]).toBe('message_start');
  expect(eventTypes.at(-1)).toBe('message_stop');
  expect(streamedText.length).toBeGreaterThan(0);
});
