/**
 * The contract through orval's fetch client: generated from generated/openapi.yaml with the
 * running server as base URL, orval/program.ts type-checked against it under `strict`, then run:
 * every operation but getMetrics and the cloud formats' streams (see program.ts for why), and one Messages stream typed by event.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DOCUMENT_PATH } from '../../src/http/openapi-document.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { documentOperationIds, strictTypeErrors, successStatus, seedUser, sdkIdentity } from './sdk-support.js';

const here = fileURLToPath(new URL('./orval/', import.meta.url));
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ identity: sdkIdentity() });
  rmSync(`${here}client`, { recursive: true, force: true });
  // In its own process: orval prints a banner on success, which this run keeps (and shows on failure).
  const options = { input: DOCUMENT_PATH, output: { target: `${here}client/api.ts`, client: 'fetch', mode: 'single', baseUrl: gw.url } };
  const script = `import { generate } from 'orval'; await generate(${JSON.stringify(options)});`;
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)) }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`orval failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  });
}, 120_000);
afterAll(async () => gw?.close());

/** Not callable through orval's fetch client: it JSON.parses the answer, which is text or a stream here. */
const LEFT_OUT = ['getMetrics', 'bedrockInvokeModelWithResponseStream', 'vertexStreamRawPredict'];

it('the generated client type-checks with a strict program', () => {
  expect(strictTypeErrors(`${here}tsconfig.json`)).toBe('');
}, 120_000);

it('runs every operation but getMetrics and the cloud formats\' streams against the server, and reads a stream by event type', async () => {
  // Through a variable: the program's imports exist only once generated (the project's tsc excludes it).
  const programPath = `${here}program.ts`;
  const { runProgram } = (await import(/* @vite-ignore */ programPath)) as {
    runProgram: (c: { clientKey: string; adminKey: string; userId: string }) => Promise<{ outcomes: Record<string, number>; streamedText: string; eventTypes: string[] }>;
  };
  const { outcomes, streamedText, eventTypes } = await runProgram({ clientKey: gw.key, adminKey: gw.adminKey, userId: await seedUser(gw) });
  const operations = documentOperationIds().filter((id) => !LEFT_OUT.includes(id));
  expect(Object.keys(outcomes).sort()).toEqual(operations.sort());
  for (const id of operations) expect(outcomes[id], id).toBe(successStatus(id));
  expect(eventTypes[0]).toBe('message_start');
  expect(eventTypes.at(-1)).toBe('message_stop');
  expect(streamedText.length).toBeGreaterThan(0);
});
