import { catalogSource, loadCatalog } from '../config/default-catalog.js';
import { accountBody, accountsPage, balanceBody, journalBody, journalCursor, ledgerPage, PAGE_LIMIT, usagePage } from '../handlers/accounts.js';
import { keyBody } from '../handlers/keys.js';
import { auditBody } from '../handlers/audit.js';
import { groupBudgetsBody, userBody, userBudgetsBody, usersPage } from '../handlers/users.js';
import { loadIdentityConfig } from '../config/load-config.js';
import { userInfo } from 'node:os';
import { spendBody, spendParams } from '../handlers/spend.js';
import { BUDGET_PERIODS, ledgerOptionsFromEnv, openLedger, MAX_BALANCE, MONEY_UNIT, type KeyBudget, type KeySettings, type Ledger } from '../ledger/index.js';
import { catalogModelIds } from '../routing/index.js';

type Flags = {
  balance?: string; name?: string; account?: string; reason?: string; rpm?: string; tpm?: string; models?: string; limit?: string; before?: string;
  'end-user'?: string; after?: string; session?: string; budget?: string; 'time-zone'?: string; expires?: string; from?: string; to?: string; 'group-by'?: string;
};

/**
 * The admin CLI: the same ledger code the admin API uses, straight on the database, and the same
 * JSON shapes (the admin handlers' serializers: snake_case, amounts as numbers).
 */
export async function runAdminCommand(command: string, args: string[], flags: Flags): Promise<number> {
  // Checked before the database opens: a typo costs no start-up, and the catalog note comes first.
  const settings = command === 'keys' && (args[0] === 'create' || args[0] === 'update') ? keySettings(flags) : undefined;
  const ledger = await openLedger(ledgerOptionsFromEnv());
  try {
    const out = await dispatch(ledger, [command, ...args], flags, settings);
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  } finally {
    await ledger.close();
  }
}

async function dispatch(ledger: Ledger, words: string[], flags: Flags, settings: KeySettings | undefined): Promise<unknown> {
  const [a, b, c, d] = words;
  const need = (v: string | undefined, what: string) => {
    if (!v) throw new Error(`missing ${what} (see switchyard --help)`);
    return v;
  };
  const account = async (id: string) => (await ledger.getAccount(id)) ?? fail(`no account ${id}`);
  /** Every change the CLI makes is in the audit log too, as the CLI's (and the OS user's). */
  const audited = async <T>(action: string, targetType: 'account' | 'key' | 'user', targetId: string, before: unknown, after: T): Promise<T> => {
    await ledger.audit({ actor: { kind: 'cli', name: osUser() }, action, targetType, targetId, before, after });
    return after;
  };
  switch (`${a} ${b ?? ''}`.trim()) {
    case 'accounts create': {
      const created = accountBody(await ledger.createAccount(need(c, '<name>'), money(flags.balance ?? '0', '--balance', false)));
      return audited('account.create', 'account', created.id, null, created);
    }
    case 'accounts list':
      return accountsPage(ledger, pageLimit(flags.limit), flags.before);
    case 'accounts show':
      return accountBody(await account(need(c, '<account_id>')));
    case 'keys create': {
      const { key, record } = await ledger.createKey(need(c, '<account_id>'), settings!);
      await audited('key.create', 'key', record.id, null, keyBody(record));
      return { ...keyBody(record), key };
    }
    case 'keys update':
    case 'keys revoke': {
      const id = need(c, '<key_id>');
      const before = (await ledger.getKey(id)) ?? fail(`no key ${id}`);
      const after = b === 'update' ? await ledger.updateKey(id, settings!) : await ledger.revokeKey(id);
      return audited(`key.${b}`, 'key', id, keyBody(before), keyBody(after ?? fail(`no key ${id}`)));
    }
    case 'users list':
      return usersPage(ledger, { accountId: flags.account, limit: pageLimit(flags.limit), afterId: flags.after });
    case 'users disable':
    case 'users enable': {
      const id = need(c, '<user_id>');
      const before = (await ledger.getUser(id)) ?? fail(`no user ${id}`);
      const after = (await ledger.setUserDisabled(id, b === 'disable'))!;
      return audited(`user.${b}`, 'user', id, userBody(before), userBody(after));
    }
    case 'users budgets':
      return userBudgetsBody(ledger, identity(), need(c, '<user_id>'));
    case 'groups budgets':
      return groupBudgetsBody(ledger, identity(), need(c, '<group>'));
    case 'keys list':
      return { data: (await ledger.listKeys(flags.account)).map(keyBody) };
    default:
  }
  switch (a) {
    case 'credit': {
      const id = need(b, '<account_id>');
      const before = accountBody(await account(id));
      const entry = await ledger.credit(id, money(need(c, '<amount>'), '<amount>', true), need(flags.reason ?? d, '--reason'));
      const after = accountBody(await account(id));
      await audited('account.credit', 'account', id, before, { ...after, credit: journalBody(entry) });
      return { entry: journalBody(entry), account: after };
    }
    case 'audit': {
      const entries = await ledger.listAudit({ limit: pageLimit(flags.limit), beforeId: flags.before === undefined ? undefined : cursor(flags.before) });
      // Newest first; --before <last id> for the next page.
      return { data: entries.map(auditBody) };
    }
    case 'balance':
      return balanceBody(await account(need(b, '<account_id>')));
    case 'ledger': {
      const id = (await account(need(b, '<account_id>'))).id;
      return ledgerPage(ledger, id, pageLimit(flags.limit), flags.before === undefined ? undefined : cursor(flags.before));
    }
    case 'spend': {
      // The admin API's checks and defaults (from/to RFC 3339, the last 30 days, group by day).
      const params = spendParams({ from: flags.from, to: flags.to, group_by: flags['group-by'] }, new Date());
      return spendBody(ledger, params, { accountId: flags.account });
    }
    case 'usage': {
      const id = (await account(need(b, '<account_id>'))).id;
      const filter = { ...(flags['end-user'] !== undefined ? { endUser: flags['end-user'] } : {}), ...(flags.session !== undefined ? { session: flags.session } : {}) };
      return usagePage(ledger, id, pageLimit(flags.limit), flags.before, filter);
    }
    default:
      throw new Error(`unknown command "${words.join(' ')}" (see switchyard --help)`);
  }
}

/** The identity policy the gateway would load (SWITCHYARD_CONFIG's `oidc:` and the SWITCHYARD_OIDC_* variables). */
function identity() {
  return loadIdentityConfig(process.env.SWITCHYARD_CONFIG || undefined, process.env);
}

/**
 * An amount of nanodollars as the admin API takes it: a decimal integer of at most 2^53 - 1 in
 * size, so every balance stays a JSON number the API can answer with.
 */
function money(text: string, what: string, negativeAllowed: boolean): bigint {
  if (!/^-?\d+$/.test(text)) throw new Error(`${what} must be a whole number of ${MONEY_UNIT}, got ${JSON.stringify(text)}`);
  const v = BigInt(text);
  if (v < 0n && !negativeAllowed) throw new Error(`${what} must not be negative`);
  if (v > MAX_BALANCE || v < -MAX_BALANCE) throw new Error(`${what} must be at most ${MAX_BALANCE} ${MONEY_UNIT} in size`);
  return v;
}

/** `--limit` as the admin API's `limit`: rows per page. */
function pageLimit(text: string | undefined): number {
  if (text === undefined) return PAGE_LIMIT.default;
  const v = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(v >= 1 && v <= PAGE_LIMIT.max)) throw new Error(`--limit must be a whole number from 1 to ${PAGE_LIMIT.max}, got ${JSON.stringify(text)}`);
  return v;
}

/** `--before` of the journal: the API's check, in the CLI's words. */
function cursor(text: string): bigint {
  try {
    return journalCursor(text);
  } catch (e) {
    throw new Error(`--${(e as Error).message.replace(/^before_id/, 'before')}`);
  }
}

function keySettings(flags: Flags): KeySettings {
  return {
    name: flags.name,
    rpmLimit: limit(flags.rpm, '--rpm'),
    tpmLimit: limit(flags.tpm, '--tpm'),
    allowedModels: models(flags.models),
    budgets: budgets(flags.budget),
    budgetTimeZone: flags['time-zone'],
    expiresAt: expiry(flags.expires),
  };
}

/** `--budget day=N,week=N,month=N,lifetime=N` (nanodollars per period) replaces every budget; `none` clears them. */
function budgets(text: string | undefined): KeyBudget[] | null | undefined {
  if (text === undefined) return undefined;
  if (text === 'none') return null;
  return text.split(',').map((part) => {
    const [period, amount] = part.split('=').map((x) => x.trim());
    if (!BUDGET_PERIODS.includes(period as KeyBudget['period']) || amount === undefined) {
      throw new Error(`--budget takes period=nanodollars pairs (periods: ${BUDGET_PERIODS.join(', ')}), or none, got ${JSON.stringify(part)}`);
    }
    const value = money(amount, `--budget ${period}`, false);
    if (value === 0n) throw new Error(`--budget ${period} must be positive`);
    return { period: period as KeyBudget['period'], limit: value };
  });
}

/** `--expires <RFC 3339 time>`, or `never`. */
function expiry(text: string | undefined): Date | null | undefined {
  if (text === undefined) return undefined;
  if (text === 'never') return null;
  const d = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(d.getTime())) throw new Error(`--expires must be an RFC 3339 time (2026-12-31T23:59:59Z) or never, got ${JSON.stringify(text)}`);
  return d;
}

/**
 * `--models a,b` as the admin API takes it: models of the catalog the gateway would load
 * (SWITCHYARD_CONFIG, else the built-in one), aliases stored as their model; `all` for every
 * model. Which catalog that was goes to stderr: a name missing from the wrong catalog would
 * otherwise read as a typo.
 */
function models(text: string | undefined): string[] | null | undefined {
  if (text === undefined) return undefined;
  if (text === 'all') return null;
  const names = text.split(',').map((id) => id.trim()).filter(Boolean);
  if (names.length === 0) throw new Error('--models needs at least one model, or all');
  const configPath = process.env.SWITCHYARD_CONFIG || undefined;
  const source = catalogSource(configPath);
  let ids: string[];
  try {
    ids = catalogModelIds(loadCatalog(configPath, { providerKeys: 'optional' }), names, '--models');
  } catch (e) {
    throw new Error(`--models: ${(e as Error).message} (checked against ${source})`);
  }
  process.stderr.write(`switchyard: --models checked against ${source}\n`);
  return ids;
}

/** A per-minute limit as the admin API takes it (1 to 2^31 - 1), `none` for no limit, absent to leave it. */
function limit(text: string | undefined, what: string): number | null | undefined {
  if (text === undefined) return undefined;
  if (text === 'none') return null;
  const v = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(v >= 1 && v <= 2 ** 31 - 1)) throw new Error(`${what} must be a whole number from 1 to ${2 ** 31 - 1}, or none, got ${JSON.stringify(text)}`);
  return v;
}

function fail(message: string): never {
  throw new Error(message);
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
