/** The audit log is append-only on every database: the database itself refuses to alter or delete it. */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/index.js';
import { dbTargets, openForSuite } from './db-targets.js';

describe.each(dbTargets)('audit log ($name)', (target) => {
  let ledger: Ledger;
  openForSuite(target, (opened) => (ledger = opened.ledger));

  it('keeps what was appended and refuses UPDATE and DELETE', async () => {
    await ledger.audit({ actor: { kind: 'cli', name: 'ops' }, action: 'account.create', targetType: 'account', targetId: 'acct_x', before: null, after: { name: 'x' } });
    const [entry] = await ledger.listAudit({ limit: 10 });
    expect(entry).toMatchObject({ actor: { kind: 'cli', name: 'ops' }, action: 'account.create', targetId: 'acct_x', after: { name: 'x' } });
    await expect(sql`UPDATE audit_log SET action = 'nothing happened'`.execute(ledger.db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM audit_log`.execute(ledger.db)).rejects.toThrow(/append-only/);
    expect((await ledger.listAudit({ limit: 10 }))[0]).toEqual(entry);
  });
});
