/**
 * The contract through orval's fetch client: generated from generated/openapi.yaml with the
 * running server as base URL, orval/program.ts type-checked against it under `strict`, then run:
 * every operation but getMetrics (see program.ts for why).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generate } from 'orval';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DOCUMENT_PATH } from '../../src/http/openapi-document.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

const here = fileURLToPath(new URL('./orval/', import.meta.url));
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
  rmSync(`${here}client`, { recursive: true, force: true });
  await generate({ input: DOCUMENT_PATH, output: { target: `${here}client/api.ts`, client: 'fetch', mode: 'single', baseUrl: gw.url } } as any);
}, 120_000);
afterAll(async () => gw?.close());

/** Not callable through orval's fetch client: it JSON.parses the text answer. */
const LEFT_OUT = ['getMetrics'];
const SUCCESS: Record<string, number> = { adminCreateAccount: 201, adminCreateKey: 201 };

it('the generated client type-checks with a strict program', () => {
  const tsc = fileURLToPath(new URL('../../node_modules/.bin/tsc', import.meta.url));
  let output = '';
  try {
    execFileSync(tsc, ['--noEmit', '-p', `${here}tsconfig.json`], { encoding: 'utf8' });
  } catch (e: any) {
    output = String(e.stdout ?? e);
  }
  expect(output).toBe('');
}, 120_000);

it('runs every operation but getMetrics against the server', async () => {
  // Through a variable: the program's imports exist only once generated (the project's tsc excludes it).
  const programPath = `${here}program.ts`;
  const { runProgram } = (await import(/* @vite-ignore */ programPath)) as { runProgram: (c: { clientKey: string; adminKey: string }) => Promise<Record<string, number>> };
  const outcomes = await runProgram({ clientKey: gw.key, adminKey: gw.adminKey });
  const document = parse(readFileSync(DOCUMENT_PATH, 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId).filter((id): id is string => !!id && !LEFT_OUT.includes(id)));
  expect(Object.keys(outcomes).sort()).toEqual(operations.sort());
  for (const id of operations) expect(outcomes[id], id).toBe(SUCCESS[id] ?? 200);
});
