/**
 * Sign-in with an organisation's OpenID Connect provider: the `oidc:` section of the config file,
 * or, for the simplest case, SWITCHYARD_OIDC_ISSUER / SWITCHYARD_OIDC_AUDIENCE (and optionally
 * SWITCHYARD_OIDC_JWKS_URL, SWITCHYARD_OIDC_DEFAULT_ACCOUNT). The variables win over the file.
 */
import { Ajv } from 'ajv';
import { ConfigError } from './config-error.js';
import { findModel, type Catalog } from '../routing/catalog.js';
import { groupBudgetOwner } from '../ledger/budgets.js';
import type { HoldBudget } from '../ledger/types.js';

/** Asymmetric algorithms only: never `none`, never HS* (an HMAC "signed" with the issuer's public key). */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** What a group (or every user) is allowed; absent fields leave the default's. */
export interface IdentityPolicy {
  /** Catalog models (ids or aliases); absent: every model. */
  allowedModels?: string[];
  rpmLimit?: number;
  tpmLimit?: number;
  /** Budgets of each member on their own. */
  userBudgets?: Array<{ period: 'day' | 'week' | 'month' | 'lifetime'; limit: bigint }>;
  /** Budgets of the group's members together (groups only). */
  budgets?: Array<{ period: 'day' | 'week' | 'month' | 'lifetime'; limit: bigint }>;
}

export interface IdentityConfig {
  issuer: string;
  audience: string[];
  /** Where the signing keys are; absent: the `jwks_uri` of the issuer's discovery document. */
  jwksUrl?: string;
  algorithms: string[];
  /** Leeway on exp and nbf. */
  clockSkewS: number;
  claims: { user: string; name: string; groups: string; organization?: string };
  /** Organisation claim value -> account id. */
  organizations: Record<string, string>;
  /** The account of a user whose organisation maps to none. */
  defaultAccount?: string;
  /** Members of these groups are the console's operators. */
  adminGroups: string[];
  /** The console's client at the IdP (authorization code with PKCE). */
  console?: { clientId: string; clientSecret?: string; scopes: string[]; name: string };
  /** IANA time zone where users' and groups' budget days, weeks and months begin. */
  budgetTimeZone: string;
  /** Everyone's policy; a group's policy overrides it field by field. */
  users: IdentityPolicy;
  groups: Record<string, IdentityPolicy>;
}

const budgetList = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['period', 'limit'],
    properties: { period: { enum: ['day', 'week', 'month', 'lifetime'] }, limit: { type: ['integer', 'string'] } },
  },
} as const;

const policy = (group: boolean) =>
  ({
    type: 'object',
    additionalProperties: false,
    properties: {
      allowed_models: { type: 'array', items: { type: 'string', minLength: 1 } },
      rpm_limit: { type: 'integer', minimum: 1 },
      tpm_limit: { type: 'integer', minimum: 1 },
      user_budgets: budgetList,
      ...(group ? { budgets: budgetList } : {}),
    },
  }) as const;

/** The `oidc:` section of the config file. */
export const identitySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    issuer: { type: 'string', pattern: '^https?://' },
    audience: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }] },
    jwks_url: { type: 'string', pattern: '^https?://' },
    algorithms: { type: 'array', minItems: 1, items: { enum: [...ASYMMETRIC_ALGORITHMS] } },
    clock_skew_s: { type: 'integer', minimum: 0, maximum: 300 },
    claims: {
      type: 'object',
      additionalProperties: false,
      properties: {
        user: { type: 'string', minLength: 1 },
        name: { type: 'string', minLength: 1 },
        groups: { type: 'string', minLength: 1 },
        organization: { type: 'string', minLength: 1 },
      },
    },
    organizations: { type: 'object', additionalProperties: { type: 'string', pattern: '^acct_' } },
    default_account: { type: 'string', pattern: '^acct_' },
    admin_groups: { type: 'array', items: { type: 'string', minLength: 1 } },
    budget_time_zone: { type: 'string', minLength: 1 },
    console: {
      type: 'object',
      additionalProperties: false,
      required: ['client_id'],
      properties: {
        client_id: { type: 'string', minLength: 1 },
        client_secret_env: { type: 'string', minLength: 1 },
        scopes: { type: 'array', items: { type: 'string', minLength: 1 } },
        name: { type: 'string', minLength: 1 },
      },
    },
    users: policy(false),
    groups: { type: 'object', additionalProperties: policy(true) },
  },
} as const;

const validate = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(identitySchema);

type Raw = Record<string, any>;

/**
 * The identity settings from the config file's `oidc:` section (already parsed) and the
 * environment; undefined when neither names an issuer (tokens are then not accepted).
 */
export function buildIdentityConfig(section: unknown, env: NodeJS.ProcessEnv, source = 'config'): IdentityConfig | undefined {
  if (section !== undefined && !validate(section)) {
    const problems = (validate.errors ?? []).map((e) => `oidc${e.instancePath.replaceAll('/', '.')} ${e.message}`);
    throw new ConfigError(`${source} is invalid:\n  ${problems.join('\n  ')}`);
  }
  const raw = (section ?? {}) as Raw;
  const issuer = env.SWITCHYARD_OIDC_ISSUER || raw.issuer;
  if (!issuer) {
    if (section !== undefined) throw new ConfigError(`${source}: oidc.issuer (or SWITCHYARD_OIDC_ISSUER) is required`);
    return undefined;
  }
  if (!/^https?:\/\//.test(issuer)) throw new ConfigError(`SWITCHYARD_OIDC_ISSUER must be an http(s) URL, got ${JSON.stringify(issuer)}`);
  const audienceText = env.SWITCHYARD_OIDC_AUDIENCE || raw.audience;
  if (!audienceText) throw new ConfigError(`${source}: oidc.audience (or SWITCHYARD_OIDC_AUDIENCE) is required with an issuer: a token for another audience must not pass`);
  const audience = Array.isArray(audienceText) ? audienceText : String(audienceText).split(',').map((a) => a.trim()).filter(Boolean);
  const jwksUrl = env.SWITCHYARD_OIDC_JWKS_URL || raw.jwks_url;
  if (jwksUrl && !/^https?:\/\//.test(jwksUrl)) throw new ConfigError(`SWITCHYARD_OIDC_JWKS_URL must be an http(s) URL`);
  const defaultAccount = env.SWITCHYARD_OIDC_DEFAULT_ACCOUNT || raw.default_account;
  if (defaultAccount && !defaultAccount.startsWith('acct_')) throw new ConfigError('SWITCHYARD_OIDC_DEFAULT_ACCOUNT must be an account id (acct_…)');
  const consoleRaw = raw.console as Raw | undefined;
  let consoleClient: IdentityConfig['console'];
  if (consoleRaw) {
    const secret = consoleRaw.client_secret_env ? env[consoleRaw.client_secret_env] : undefined;
    if (consoleRaw.client_secret_env && !secret) throw new ConfigError(`${source}: oidc.console.client_secret_env names ${consoleRaw.client_secret_env}, which is not set`);
    consoleClient = { clientId: consoleRaw.client_id, clientSecret: secret, scopes: consoleRaw.scopes ?? ['openid', 'profile', 'email'], name: consoleRaw.name ?? new URL(issuer).hostname };
  }
  const budgetTimeZone = raw.budget_time_zone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: budgetTimeZone });
  } catch {
    throw new ConfigError(`${source}: oidc.budget_time_zone: unknown time zone ${JSON.stringify(budgetTimeZone)} (an IANA name such as Europe/Paris)`);
  }
  const groups: Record<string, IdentityPolicy> = {};
  for (const [name, g] of Object.entries((raw.groups ?? {}) as Record<string, Raw>)) groups[name] = buildPolicy(g, `${source}: oidc.groups.${name}`);
  return {
    issuer,
    audience,
    jwksUrl: jwksUrl || undefined,
    algorithms: raw.algorithms ?? ['RS256', 'PS256', 'ES256', 'EdDSA'],
    clockSkewS: raw.clock_skew_s ?? 30,
    claims: { user: 'sub', name: 'email', groups: 'groups', ...raw.claims },
    organizations: raw.organizations ?? {},
    defaultAccount: defaultAccount || undefined,
    adminGroups: raw.admin_groups ?? [],
    console: consoleClient,
    budgetTimeZone,
    users: buildPolicy(raw.users ?? {}, `${source}: oidc.users`),
    groups,
  };
}

function buildPolicy(raw: Raw, where: string): IdentityPolicy {
  const out: IdentityPolicy = {};
  if (raw.allowed_models) out.allowedModels = raw.allowed_models;
  if (raw.rpm_limit !== undefined) out.rpmLimit = raw.rpm_limit;
  if (raw.tpm_limit !== undefined) out.tpmLimit = raw.tpm_limit;
  if (raw.user_budgets) out.userBudgets = budgets(raw.user_budgets, `${where}.user_budgets`);
  if (raw.budgets) out.budgets = budgets(raw.budgets, `${where}.budgets`);
  return out;
}

function budgets(list: Raw[], where: string): NonNullable<IdentityPolicy['budgets']> {
  const seen = new Set<string>();
  return list.map((b) => {
    if (seen.has(b.period)) throw new ConfigError(`${where}: two budgets for the period ${b.period}`);
    seen.add(b.period);
    const text = String(b.limit);
    if (!/^\d+$/.test(text) || BigInt(text) <= 0n) throw new ConfigError(`${where}: limit must be a positive whole number of nanodollars, got ${JSON.stringify(b.limit)}`);
    return { period: b.period, limit: BigInt(text) };
  });
}

/** Every model a policy names must be in the catalog: a typo would otherwise shut a group out. */
export function checkIdentityModels(config: IdentityConfig, catalog: Catalog): void {
  const named: Array<[string, IdentityPolicy]> = [['oidc.users', config.users], ...Object.entries(config.groups).map(([g, p]): [string, IdentityPolicy] => [`oidc.groups.${g}`, p])];
  for (const [where, p] of named) {
    for (const m of p.allowedModels ?? []) if (!findModel(catalog, m)) throw new ConfigError(`${where}.allowed_models: no model "${m}" in the catalog`);
  }
}

/**
 * The budgets a user's requests must fit besides the account's balance: their own (`users:`, or
 * the most generous their groups set, see effectivePolicy) and, for each of their groups that has
 * `budgets`, that group's, which every member's requests share. All of them apply: a request must
 * fit each, and the tightest refuses it. A group's budget is the group's name, whichever account
 * its members bill.
 */
export function identityBudgets(config: IdentityConfig, userId: string, groups: readonly string[]): HoldBudget[] {
  const out: HoldBudget[] = (effectivePolicy(config, groups).userBudgets ?? []).map((b) => ({ owner: userId, period: b.period, limit: b.limit, timeZone: config.budgetTimeZone }));
  for (const g of new Set(groups)) out.push(...groupBudgets(config, g));
  return out;
}

/** A group's budgets (its members together); none for a group the policy does not name. */
export function groupBudgets(config: IdentityConfig, group: string): HoldBudget[] {
  return (config.groups[group]?.budgets ?? []).map((b) => ({ owner: groupBudgetOwner(group), period: b.period, limit: b.limit, timeZone: config.budgetTimeZone }));
}

/**
 * What a user may do: `users:` (everyone's policy), with each field that a group of theirs sets
 * taken from their groups instead, the most generous where several set it (a group grants: the
 * union of allowed models, the highest rate limits and per-user budgets). Group budgets (the
 * members together) are not merged: each of the user's groups keeps its own.
 */
export function effectivePolicy(config: IdentityConfig, groups: readonly string[]): IdentityPolicy {
  const policies = groups.flatMap((g) => config.groups[g] ?? []);
  const from = <T>(pick: (p: IdentityPolicy) => T | undefined, merge: (values: T[]) => T): T | undefined => {
    const set = policies.map(pick).filter((v): v is T => v !== undefined);
    return set.length > 0 ? merge(set) : pick(config.users);
  };
  const out: IdentityPolicy = {};
  const allowed = from((p) => p.allowedModels, (lists) => [...new Set(lists.flat())]);
  if (allowed) out.allowedModels = allowed;
  const rpm = from((p) => p.rpmLimit, (v) => Math.max(...v));
  if (rpm !== undefined) out.rpmLimit = rpm;
  const tpm = from((p) => p.tpmLimit, (v) => Math.max(...v));
  if (tpm !== undefined) out.tpmLimit = tpm;
  const budgets = from((p) => p.userBudgets, mostGenerousBudgets);
  if (budgets) out.userBudgets = budgets;
  return out;
}

function mostGenerousBudgets(lists: NonNullable<IdentityPolicy['userBudgets']>[]): NonNullable<IdentityPolicy['userBudgets']> {
  const best = new Map<string, bigint>();
  for (const b of lists.flat()) if ((best.get(b.period) ?? -1n) < b.limit) best.set(b.period, b.limit);
  return [...best].map(([period, limit]) => ({ period: period as 'day', limit }));
}
