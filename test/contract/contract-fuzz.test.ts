/**
 * Contract fuzzing (issue 7): every operation of generated/openapi.yaml, valid and invalid
 * requests, against the real server. `FUZZ_RUNS` sets the cases per operation (`make fuzz`);
 * without it a bounded budget keeps `make test` fast. FUZZ_SEED replays a run.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../../tools/contract-fuzz/load-contract.js';
import { FuzzReport } from '../../tools/contract-fuzz/report.js';
import { fuzzOperation, type FuzzRun } from '../../tools/contract-fuzz/run-fuzz.js';
import { FUZZ_BODY_LIMIT, officialChecks, startFuzzServer, type FuzzServer } from './fuzz-gateway.js';

const contract = await loadContract();
const COMPLETIONS = new Set(['createChatCompletion', 'createMessage', 'createResponse', 'countMessageTokens']);
const fromEnv = Number(process.env.FUZZ_RUNS) || undefined;
const seed = Number(process.env.FUZZ_SEED) || undefined;

/** Cases per operation: FUZZ_RUNS when set; else 260 for the completion endpoints and 80 for the rest (2,160 in all). */
function budget(operationId: string): { valid: number; invalid: number } {
  const total = fromEnv ?? (COMPLETIONS.has(operationId) ? 260 : 80);
  return { valid: Math.ceil(total / 2), invalid: Math.floor(total / 2) };
}

let server: FuzzServer;
let run: FuzzRun;
const report = new FuzzReport();

beforeAll(async () => {
  server = await startFuzzServer();
  run = { ctx: server.ctx, baseUrl: server.gw.url, report, official: officialChecks, timeoutMs: 15_000, bodyLimitBytes: FUZZ_BODY_LIMIT, seed };
});

let failed = false;
afterAll(async () => {
  // The table of statuses per operation is for `make fuzz` (FUZZ_RUNS) and for a failed run; a
  // green `make test` stays quiet.
  if (fromEnv || failed) console.log(report.format());
  await server?.close();
});

describe('contract fuzz: every operation of generated/openapi.yaml', () => {
  for (const op of contract.operations) {
    const runs = budget(op.operationId);
    it(`${op.operationId} (${op.method} ${op.path})`, { timeout: 60_000 + (runs.valid + runs.invalid) * 200 }, async () => {
      await fuzzOperation(run, op, runs).catch((err: unknown) => {
        failed = true;
        throw err;
      });
    });
  }

  it('reached the pipeline: completions answered 200 (streamed and not)', () => {
    for (const id of ['createChatCompletion', 'createMessage', 'createResponse']) expect(report.statusCount(id, 200), id).toBeGreaterThan(0);
  });

  it('left no hold open and the journal adds up to the balances', async () => {
    const db = server.gw.ledger.db;
    const pending = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM holds WHERE status = 'pending'`.execute(db)).rows[0].n);
    // A stream's settlement may land just after its last byte: allow a moment, then insist.
    for (let i = 0; i < 50 && (await pending()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await pending()).toBe(0);
    const check = await server.gw.ledger.balanceCheck();
    expect(check.problems).toEqual([]);
    const { rows } = await sql<{ id: string; balance: string; total: string | null }>`
      SELECT a.id, a.balance, (SELECT sum(amount) FROM journal j WHERE j.account_id = a.id) AS total FROM accounts a`.execute(db);
    for (const r of rows) expect(BigInt(r.total ?? 0), r.id).toBe(BigInt(r.balance));
  });
});
