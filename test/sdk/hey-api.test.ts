/**
 * The contract through @hey-api/openapi-ts with its zod validator: the SDK is generated from
 * generated/openapi.yaml, hey-api/program.ts is type-checked against it under `strict`, then runs
 * against the real server: every operation of the document, and one stream read by event type.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createClient } from '@hey-api/openapi-ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DOCUMENT_PATH } from '../../src/http/openapi-document.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { documentOperationIds, strictTypeErrors, successStatus, seedUser, sdkIdentity } from './sdk-support.js';

const here = fileURLToPath(new URL('./hey-api/', import.meta.url));
let gw: TestGateway;
beforeAll(async () => {
  rmSync(`${here}client`, { recursive: true, force: true });
  await createClient({
    input: DOCUMENT_PATH,
    output: `${here}client`,
    plugins: ['@hey-api/client-fetch', 'zod', { name: '@hey-api/sdk', validator: true }],
    logs: { level: 'silent' },
  } as any);
  gw = await startTestGateway({ identity: sdkIdentity() });
}, 120_000);
afterAll(async () => gw?.close());

it('the generated SDK type-checks with a strict program', () => {
  expect(strictTypeErrors(`${here}tsconfig.json`)).toBe('');
}, 120_000);

it('runs every operation of the document through the validating SDK, and reads a stream by event type', async () => {
  // Through a variable: the program's imports exist only once generated, so the project's tsc
  // (which excludes test/sdk/hey-api) must not follow this import.
  const programPath = `${here}program.ts`;
  const { runProgram } = (await import(/* @vite-ignore */ programPath)) as { runProgram: (c: { baseUrl: string; clientKey: string; adminKey: string; userId: string }) => Promise<{ outcomes: Record<string, number>; streamedText: string; eventTypes: string[] }> };
  const { outcomes, streamedText, eventTypes } = await runProgram({ baseUrl: gw.url, clientKey: gw.key, adminKey: gw.adminKey, userId: await seedUser(gw) });
  const operations = documentOperationIds();
  expect(Object.keys(outcomes).sort()).toEqual(operations.sort());
  for (const id of operations) expect(outcomes[id], id).toBe(successStatus(id));
  expect(eventTypes[0]).toBe('message_start');
  expect(streamedText.length).toBeGreaterThan(0);
});
