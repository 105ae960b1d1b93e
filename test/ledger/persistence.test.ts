import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/index.js';

describe.each(['sqlite', 'pglite'] as const)('%s on disk', (embedded) => {
  it('keeps accounts, keys and holds across a reopen, and migrating again is a no-op', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-ledger-'));
    try {
      const dataDir = join(dir, 'nested', 'data');
      const first = await openLedger({ dataDir, embedded });
      const a = await first.createAccount('disk', 5_000n);
      const { key } = await first.createKey(a.id);
      await first.placeHold({ requestId: 'disk-1', accountId: a.id, amount: 1_000n, ttlMs: 60_000 });
      await first.close();

      const second = await openLedger({ dataDir, embedded });
      try {
        expect(await second.getAccount(a.id)).toMatchObject({ balance: 5_000n, held: 1_000n, available: 4_000n });
        expect(await second.authenticate(key)).toMatchObject({ accountId: a.id });
        expect(await second.release('disk-1')).toBe(true);
        expect(await second.balanceCheck()).toEqual({ ok: true, problems: [] });
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('serves one process at a time: a second open fails with what to do, and closing frees the directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-ledger-'));
    try {
      const first = await openLedger({ dataDir: dir, embedded });
      const a = await first.createAccount('only', 100n);
      // Each would otherwise start from the files as they are, and lose the other's writes.
      await expect(openLedger({ dataDir: dir, embedded })).rejects.toThrow(/in use by another Switchyard process.*DATABASE_URL/s);
      await first.close();
      const second = await openLedger({ dataDir: dir, embedded });
      expect(await second.getAccount(a.id)).toMatchObject({ balance: 100n });
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
