/**
 * Child process for the multi-process test: opens the ledger on a shared PostgreSQL schema,
 * says `ready`, waits for `go` on stdin (so all processes start together), places N holds at once, and prints {ok, insufficient, other}.
 */
import { openLedger } from '../../src/ledger/index.js';
import { isGatewayError } from '../../src/ir/errors.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`missing ${name}`);
  return v;
};

const ledger = await openLedger({ databaseUrl: env('LEDGER_URL'), schema: env('LEDGER_SCHEMA'), poolSize: 10 });
try {
  const n = Number(env('HOLDS'));
  const amount = BigInt(env('AMOUNT'));
  const accountId = env('ACCOUNT');
  const tag = env('TAG');
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => {
    process.stdin.on('data', (d) => {
      if (String(d).includes('go')) resolve();
    });
  });
  process.stdin.destroy();
  const results = await Promise.allSettled(
    Array.from({ length: n }, (_, i) => ledger.placeHold({ requestId: `${tag}-${i}`, accountId, amount, ttlMs: 60_000 })),
  );
  const out = { ok: 0, insufficient: 0, other: [] as string[] };
  for (const r of results) {
    if (r.status === 'fulfilled') out.ok++;
    else if (isGatewayError(r.reason) && r.reason.kind === 'insufficient_balance') out.insufficient++;
    else out.other.push(String(r.reason));
  }
  process.stdout.write(JSON.stringify(out) + '\n');
} finally {
  await ledger.close();
}
