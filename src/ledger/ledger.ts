import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type {
  Account, HoldRequest, JournalEntry, KeyRecord, SettleRequest, UsageRecord, UsageRecordInput,
} from './types.js';
import { connect, migrate, type ConnectOptions } from './connect.js';
import { createAccount, credit, getAccount } from './accounts.js';
import { authenticate, createKey, listKeys, revokeKey } from './keys.js';
import { placeHold } from './place-hold.js';
import { extendHold } from './extend-hold.js';
import { settle, type SettleResult } from './settle.js';
import { reapExpired, release } from './release.js';
import { balanceCheck, ledgerEntries, usageRecords } from './read-ledger.js';

export interface LedgerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface LedgerOptions extends ConnectOptions {
  log?: LedgerLog;
}

/** Default hold lifetime: longer than any request may run, so the reaper only frees orphans. */
export const DEFAULT_HOLD_TTL_MS = 15 * 60 * 1000;

/** DATABASE_URL selects PostgreSQL; otherwise PGlite in SWITCHYARD_DATA_DIR (default ./data). */
export function ledgerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): LedgerOptions {
  return env.DATABASE_URL
    ? { databaseUrl: env.DATABASE_URL, schema: env.SWITCHYARD_DB_SCHEMA || undefined }
    : { dataDir: env.SWITCHYARD_DATA_DIR || './data' };
}

/** Connects (PostgreSQL when databaseUrl is set, else PGlite) and runs the migrations. */
export async function openLedger(opts: LedgerOptions = {}): Promise<Ledger> {
  const db = await connect(opts);
  try {
    const applied = await migrate(db, opts.databaseUrl ? opts.schema : undefined);
    if (applied.length > 0) opts.log?.info({ migrations: applied }, 'ledger migrated');
  } catch (e) {
    await db.destroy();
    throw e;
  }
  return new Ledger(db, opts.log);
}

/** The token-billing ledger. Each money operation is one SQL statement; see the files per operation. */
export class Ledger {
  constructor(
    /** Exposed for tests and admin tooling; everything else goes through the methods. */
    readonly db: Kysely<Database>,
    private readonly log?: LedgerLog,
  ) {}

  close(): Promise<void> {
    return this.db.destroy();
  }

  createAccount(name: string, initialBalance?: bigint): Promise<Account> {
    return createAccount(this.db, name, initialBalance);
  }
  getAccount(id: string): Promise<Account | undefined> {
    return getAccount(this.db, id);
  }
  createKey(accountId: string, name?: string): Promise<{ key: string; record: KeyRecord }> {
    return createKey(this.db, accountId, name);
  }
  listKeys(accountId?: string): Promise<KeyRecord[]> {
    return listKeys(this.db, accountId);
  }
  revokeKey(keyId: string): Promise<KeyRecord | undefined> {
    return revokeKey(this.db, keyId);
  }
  authenticate(rawKey: string): Promise<{ accountId: string; keyId: string } | undefined> {
    return authenticate(this.db, rawKey);
  }

  credit(accountId: string, amount: bigint, reason: string): Promise<JournalEntry> {
    return credit(this.db, accountId, amount, reason);
  }
  placeHold(h: HoldRequest): Promise<void> {
    return placeHold(this.db, h);
  }
  async settle(s: SettleRequest): Promise<SettleResult> {
    const result = await settle(this.db, s);
    if (!result.settled) {
      // A hold that expired or was released before settling: the usage is not billed. Say so loudly.
      const status = await this.holdStatus(s.requestId);
      if (status !== 'settled') {
        this.log?.warn({ requestId: s.requestId, holdStatus: status, charges: s.charges.length }, 'settle found no pending hold; usage not billed');
      }
    }
    return result;
  }
  extendHold(requestId: string, ttlMs: number): Promise<boolean> {
    return extendHold(this.db, requestId, ttlMs);
  }
  release(requestId: string, record?: UsageRecordInput): Promise<boolean> {
    return release(this.db, requestId, record);
  }
  reapExpired(now?: Date): Promise<number> {
    return reapExpired(this.db, now);
  }

  ledgerEntries(accountId: string, limit?: number): Promise<JournalEntry[]> {
    return ledgerEntries(this.db, accountId, limit);
  }
  usageRecords(accountId: string, limit?: number): Promise<UsageRecord[]> {
    return usageRecords(this.db, accountId, limit);
  }
  balanceCheck(): Promise<{ ok: boolean; problems: string[] }> {
    return balanceCheck(this.db);
  }

  private async holdStatus(requestId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('holds').select('status').where('id', '=', requestId).executeTakeFirst();
    return row?.status;
  }
}

