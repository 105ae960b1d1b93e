import { GatewayError } from '../ir/index.js';
import { budgetScope, type BudgetStatus, type Ledger, type TokenCounts } from '../ledger/index.js';
import { MONEY_UNIT, rateAsNanos, toJsonNumber } from './json-money.js';
import type { HandlerInput, HandlerResult } from './types.js';
import { recordChange } from './audit.js';

type Account = NonNullable<Awaited<ReturnType<Ledger['getAccount']>>>;

export function accountBody(a: Account) {
  return {
    id: a.id,
    name: a.name,
    balance: toJsonNumber(a.balance),
    held: toJsonNumber(a.held),
    available: toJsonNumber(a.available),
    unit: MONEY_UNIT,
    created_at: a.createdAt.toISOString(),
  };
}

async function mustGetAccount(ledger: Ledger, id: string): Promise<Account> {
  const a = await ledger.getAccount(id);
  if (!a) throw new GatewayError('not_found', `account "${id}" does not exist`, { param: 'account_id' });
  return a;
}

/** GET /v1/balance: the caller's own account, and the calling key's budgets (a signed-in user's: their own and their groups'). */
export async function getBalance(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const account = await mustGetAccount(ledger, input.auth!.accountId);
  const { keyId, budgets: carried } = input.auth!;
  const budgets = keyId ? await ledger.budgetStatus(keyId) : carried ? await ledger.ownedBudgetStatus(carried) : [];
  return { kind: 'json', status: 200, body: { ...balanceBody(account), budgets: budgets.map(budgetBody) } };
}

export function balanceBody(a: Account) {
  return { account_id: a.id, balance: toJsonNumber(a.balance), held: toJsonNumber(a.held), available: toJsonNumber(a.available), unit: MONEY_UNIT };
}

export function budgetBody(b: BudgetStatus) {
  const { scope, group } = budgetScope(b.owner);
  return {
    scope,
    ...(group !== undefined && { group }),
    period: b.period,
    limit: toJsonNumber(b.limit),
    spent: toJsonNumber(b.spent),
    held: toJsonNumber(b.held),
    remaining: toJsonNumber(b.remaining),
    resets_at: b.resetsAt ? b.resetsAt.toISOString() : null,
  };
}

/**
 * Amounts travel as JSON numbers, exact only up to 2^53: a bigger one is already rounded when it
 * arrives, and a balance beyond it could never be shown again (toJsonNumber throws).
 */
function exactAmount(v: unknown, param: string): bigint {
  if (!Number.isSafeInteger(v)) throw new GatewayError('invalid_request', `${param} must be an integer of at most ${Number.MAX_SAFE_INTEGER} in magnitude`, { param });
  return BigInt(v as number);
}

export async function createAccount(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const a = await ledger.createAccount(input.body.name, exactAmount(input.body.balance ?? 0, 'balance'));
  await recordChange(ledger, input, { action: 'account.create', targetType: 'account', targetId: a.id, before: null, after: accountBody(a) });
  return { kind: 'json', status: 201, body: accountBody(a) };
}

/** GET /admin/accounts: newest first, a page at a time. */
export async function listAccounts(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const before = typeof input.query.before_id === 'string' ? input.query.before_id : undefined;
  return { kind: 'json', status: 200, body: await accountsPage(ledger, limitOf(input), before) };
}

/** A page of accounts in the API's shape (the admin API and the CLI). */
export async function accountsPage(ledger: Ledger, limit: number, before?: string) {
  return page((await ledger.listAccounts(limit + 1, before)).map(accountBody), limit, (a) => a.id);
}

export async function getAccount(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  return { kind: 'json', status: 200, body: accountBody(await mustGetAccount(ledger, input.params.account_id)) };
}

export async function addCredits(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  const before = await mustGetAccount(ledger, input.params.account_id);
  const amount = exactAmount(input.body.amount, 'amount');
  // The ledger's credit statement keeps the balance within MAX_BALANCE.
  const entry = await ledger.credit(input.params.account_id, amount, input.body.reason);
  const account = await mustGetAccount(ledger, input.params.account_id);
  await recordChange(ledger, input, { action: 'account.credit', targetType: 'account', targetId: account.id, before: accountBody(before), after: { ...accountBody(account), credit: journalBody(entry) } });
  return { kind: 'json', status: 200, body: { entry: journalBody(entry), account: accountBody(account) } };
}

type JournalEntry = Awaited<ReturnType<Ledger['ledgerEntries']>>[number];

/** Token counts as the API shows them: input without cache, cache reads and writes apart. */
function tokenFields(t: TokenCounts | null) {
  return {
    input_tokens: t ? toJsonNumber(t.inputNoCache) : null,
    output_tokens: t ? toJsonNumber(t.output) : null,
    cache_read_tokens: t ? toJsonNumber(t.inputCacheRead) : null,
    cache_write_tokens: t ? toJsonNumber(t.inputCacheWrite) : null,
    reasoning_tokens: t ? toJsonNumber(t.reasoning) : null,
  };
}

function nullableNumber(v: bigint | number | null | undefined): number | null {
  return v === null || v === undefined ? null : toJsonNumber(v);
}

export function journalBody(e: JournalEntry) {
  return {
    id: toJsonNumber(e.id),
    account_id: e.accountId,
    kind: e.kind,
    amount: toJsonNumber(e.amount),
    balance_after: toJsonNumber(e.balanceAfter),
    request_id: e.requestId ?? null,
    model: e.model ?? null,
    cost: nullableNumber(e.cost),
    ...tokenFields(e.tokens),
    reason: e.reason ?? null,
    created_at: e.createdAt.toISOString(),
  };
}

const MAX_INT64 = 2n ** 63n - 1n;

/** Rows per page: 100 unless asked, at most 1000. */
export const PAGE_LIMIT = { default: 100, max: 1000 } as const;

function limitOf(input: HandlerInput): number {
  const raw = Number(input.query.limit ?? PAGE_LIMIT.default);
  return Number.isInteger(raw) && raw > 0 ? Math.min(raw, PAGE_LIMIT.max) : PAGE_LIMIT.default;
}

export async function getLedger(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  await mustGetAccount(ledger, input.params.account_id);
  const before = typeof input.query.before_id === 'string' ? journalCursor(input.query.before_id) : undefined;
  return { kind: 'json', status: 200, body: await ledgerPage(ledger, input.params.account_id, limitOf(input), before) };
}

/** A journal id as a `before_id`: 1 to 19 digits (the API's pattern), within bigint. */
export function journalCursor(text: string): bigint {
  const v = /^[1-9][0-9]{0,18}$/.test(text) ? BigInt(text) : undefined;
  if (v === undefined || v > MAX_INT64) throw new GatewayError('invalid_request', `before_id must be a journal entry id (a whole number of at most ${MAX_INT64})`, { param: 'before_id' });
  return v;
}

/** A page of an account's journal in the API's shape (the admin API and the CLI). */
export async function ledgerPage(ledger: Ledger, accountId: string, limit: number, before?: bigint) {
  return page((await ledger.ledgerEntries(accountId, limit + 1, before)).map(journalBody), limit, (e) => e.id);
}

export async function getUsage(ledger: Ledger, input: HandlerInput): Promise<HandlerResult> {
  await mustGetAccount(ledger, input.params.account_id);
  const before = typeof input.query.before_id === 'string' ? input.query.before_id : undefined;
  const filter = {
    ...(typeof input.query.end_user === 'string' ? { endUser: input.query.end_user } : {}),
    ...(typeof input.query.session === 'string' ? { session: input.query.session } : {}),
    ...(typeof input.query.user_id === 'string' ? { userId: input.query.user_id } : {}),
  };
  return { kind: 'json', status: 200, body: await usagePage(ledger, input.params.account_id, limitOf(input), before, filter) };
}

type UsageRecord = Awaited<ReturnType<Ledger['usageRecords']>>[number];
type UsageFilter = NonNullable<Parameters<Ledger['usageRecords']>[3]>;

export function usageBody(r: UsageRecord) {
  return {
    request_id: r.requestId,
    account_id: r.accountId,
    model_requested: r.modelRequested,
    model_served: r.modelServed ?? null,
    attempts: r.attempts,
    ...tokenFields(r.tokens),
    cost: toJsonNumber(r.cost),
    beyond_hold: toJsonNumber(r.beyondHold),
    pricing: r.pricing?.map(pricedAttemptBody) ?? null,
    unit: MONEY_UNIT,
    latency_ms: toJsonNumber(r.latencyMs),
    status: r.status,
    end_user: r.endUser ?? null,
    session: r.session ?? null,
    user_id: r.userId ?? null,
    created_at: r.createdAt.toISOString(),
  };
}

/** One attempt's priced lines in the API's shape: rates in nanodollars per unit, exact to six decimals. */
function pricedAttemptBody(p: NonNullable<UsageRecord['pricing']>[number]) {
  return {
    model: p.model,
    deployment: p.deployment,
    price_source: p.priceSource,
    service_tier: p.serviceTier,
    long_context_above: p.longContextAbove,
    lines: p.lines.map((l) => ({ kind: l.kind, count: l.count, rate: rateAsNanos(l.rate) })),
    cost: toJsonNumber(p.cost),
  };
}

/** A page of an account's usage records in the API's shape (the admin API and the CLI). */
export async function usagePage(ledger: Ledger, accountId: string, limit: number, before?: string, filter: UsageFilter = {}) {
  return page((await ledger.usageRecords(accountId, limit + 1, before, filter)).map(usageBody), limit, (r) => r.request_id);
}

/**
 * A page of a newest-first list, read with one row more than `limit` to know whether older rows
 * remain. `last_id` is the cursor for the next page (`before_id`), as in OpenAI's and Anthropic's lists.
 */
function page<T, Id>(rows: T[], limit: number, idOf: (row: T) => Id) {
  const data = rows.slice(0, limit);
  return {
    data,
    has_more: rows.length > limit,
    first_id: data.length ? idOf(data[0]) : null,
    last_id: data.length ? idOf(data[data.length - 1]) : null,
  };
}
