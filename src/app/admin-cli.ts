import { defaultCatalog } from '../config/default-catalog.js';
import { loadConfigFile } from '../config/load-config.js';
import { ledgerOptionsFromEnv, openLedger, MAX_BALANCE, MONEY_UNIT, type KeySettings, type Ledger } from '../ledger/index.js';
import { catalogModelIds } from '../routing/index.js';

type Flags = { balance?: string; name?: string; account?: string; reason?: string; rpm?: string; tpm?: string; models?: string };

/** The admin CLI: the same ledger code the admin API uses, straight on the database. */
export async function runAdminCommand(command: string, args: string[], flags: Flags): Promise<number> {
  const ledger = await openLedger(ledgerOptionsFromEnv());
  try {
    const out = await dispatch(ledger, [command, ...args], flags);
    process.stdout.write(`${JSON.stringify(out, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
    return 0;
  } finally {
    await ledger.close();
  }
}

async function dispatch(ledger: Ledger, words: string[], flags: Flags): Promise<unknown> {
  const [a, b, c, d] = words;
  const need = (v: string | undefined, what: string) => {
    if (!v) throw new Error(`missing ${what} (see switchyard --help)`);
    return v;
  };
  switch (`${a} ${b ?? ''}`.trim()) {
    case 'accounts create':
      return ledger.createAccount(need(c, '<name>'), money(flags.balance ?? '0', '--balance', false));
    case 'accounts list':
      return ledger.listAccounts(1000);
    case 'accounts show':
      return (await ledger.getAccount(need(c, '<account_id>'))) ?? fail(`no account ${c}`);
    case 'keys create':
      return ledger.createKey(need(c, '<account_id>'), keySettings(flags));
    case 'keys update':
      return (await ledger.updateKey(need(c, '<key_id>'), keySettings(flags))) ?? fail(`no key ${c}`);
    case 'keys revoke':
      return (await ledger.revokeKey(need(c, '<key_id>'))) ?? fail(`no key ${c}`);
    case 'keys list':
      return ledger.listKeys(flags.account);
    default:
  }
  if (a === 'credit') {
    return ledger.credit(need(b, '<account_id>'), money(need(c, '<amount>'), '<amount>', true), need(flags.reason ?? d, '--reason'));
  }
  if (a === 'balance') {
    const acct = (await ledger.getAccount(need(b, '<account_id>'))) ?? fail(`no account ${b}`);
    return { account_id: acct.id, balance: acct.balance, held: acct.held, available: acct.available, unit: MONEY_UNIT };
  }
  throw new Error(`unknown command "${words.join(' ')}" (see switchyard --help)`);
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

function keySettings(flags: Flags): KeySettings {
  return { name: flags.name, rpmLimit: limit(flags.rpm, '--rpm'), tpmLimit: limit(flags.tpm, '--tpm'), allowedModels: models(flags.models) };
}

/**
 * `--models a,b` as the admin API takes it: models of the configured catalog (SWITCHYARD_CONFIG,
 * else the built-in one), aliases stored as their model; `all` for every model.
 */
function models(text: string | undefined): string[] | null | undefined {
  if (text === undefined) return undefined;
  if (text === 'all') return null;
  const catalog = process.env.SWITCHYARD_CONFIG ? loadConfigFile(process.env.SWITCHYARD_CONFIG) : defaultCatalog();
  const names = text.split(',').map((id) => id.trim()).filter(Boolean);
  if (names.length === 0) throw new Error('--models needs at least one model, or all');
  try {
    return catalogModelIds(catalog, names, '--models');
  } catch (e) {
    throw new Error(`--models: ${(e as Error).message}`);
  }
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
