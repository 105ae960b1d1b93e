import { createHash } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { effectivePolicy, identityBudgets, type IdentityConfig } from '../../config/identity.js';
import { GatewayError } from '../../ir/index.js';
import type { KeyAuth, UserPrincipal } from '../../ledger/index.js';
import { findModel, type Catalog } from '../../routing/catalog.js';

/**
 * A user's id: the same on every instance and every sign-in for one subject of one issuer
 * (OpenID Connect Core §5.7: `sub` is unique and never reassigned only within its issuer).
 */
export function userIdFor(issuer: string, subject: string): string {
  return `usr_${createHash('sha256').update(`${issuer}\n${subject}`).digest('hex').slice(0, 24)}`;
}

/** A claim by name, or by a dotted path into nested objects (Keycloak's `realm_access.roles`). */
export function readClaim(payload: JWTPayload, name: string): unknown {
  if (name in payload) return payload[name];
  let v: unknown = payload;
  for (const part of name.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

/** A claim's text; of a list (Keycloak's `organization`), its first entry. */
function stringClaim(payload: JWTPayload, name: string | undefined): string | null {
  if (!name) return null;
  const read = readClaim(payload, name);
  const v = Array.isArray(read) ? read[0] : read;
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;
}

/** Groups arrive as an array of strings (Okta, Keycloak, Entra) or, from some IdPs, one string. */
function groupsClaim(payload: JWTPayload, name: string): string[] {
  const v = readClaim(payload, name);
  if (Array.isArray(v)) return v.filter((g): g is string => typeof g === 'string');
  if (typeof v === 'string') return v.split(/[\s,]+/).filter(Boolean);
  return [];
}

/** The verified token's user: who, under which account, with what their groups allow. */
export function resolvePrincipal(payload: JWTPayload, config: IdentityConfig, catalog: Catalog): KeyAuth {
  const subject = stringClaim(payload, config.claims.user);
  if (!subject) throw new GatewayError('authentication', `invalid token: it has no ${config.claims.user} claim`, { code: 'invalid_token' });
  const groups = groupsClaim(payload, config.claims.groups);
  const organization = stringClaim(payload, config.claims.organization);
  const accountId = (organization !== null ? config.organizations[organization] : undefined) ?? config.defaultAccount;
  if (!accountId) {
    const which = organization === null ? 'users without an organisation' : `organisation ${JSON.stringify(organization)}`;
    throw new GatewayError('permission', `no account serves ${which}: the operator maps it in oidc.organizations or sets oidc.default_account`);
  }
  const user: UserPrincipal = {
    id: userIdFor(config.issuer, subject),
    issuer: config.issuer,
    subject,
    name: stringClaim(payload, config.claims.name) ?? stringClaim(payload, 'preferred_username') ?? stringClaim(payload, 'name'),
    groups,
    organization,
    admin: groups.some((g) => config.adminGroups.includes(g)),
  };
  const policy = effectivePolicy(config, groups);
  const auth: KeyAuth = { accountId, user };
  if (policy.rpmLimit !== undefined || policy.tpmLimit !== undefined) {
    auth.limits = {
      ...(policy.rpmLimit !== undefined && { requestsPerMinute: policy.rpmLimit }),
      ...(policy.tpmLimit !== undefined && { tokensPerMinute: policy.tpmLimit }),
    };
  }
  const budgets = identityBudgets(config, user.id, groups);
  if (budgets.length > 0) auth.budgets = budgets;
  if (policy.allowedModels) auth.allowedModels = new Set(policy.allowedModels.flatMap((m) => findModel(catalog, m)?.id ?? []));
  const exp = payload.exp;
  if (typeof exp === 'number') auth.expiresAt = exp * 1000;
  return auth;
}
