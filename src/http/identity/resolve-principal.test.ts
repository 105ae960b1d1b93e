import { describe, expect, it } from 'vitest';
import { buildIdentityConfig, effectivePolicy } from '../../config/identity.js';
import { readClaim } from './resolve-principal.js';

const config = buildIdentityConfig(
  {
    users: { allowed_models: ['small'], rpm_limit: 10, user_budgets: [{ period: 'day', limit: 100 }] },
    groups: {
      eng: { allowed_models: ['big'], rpm_limit: 60 },
      research: { allowed_models: ['huge'], rpm_limit: 30, user_budgets: [{ period: 'day', limit: 500 }] },
    },
  },
  { SWITCHYARD_OIDC_ISSUER: 'https://idp.example', SWITCHYARD_OIDC_AUDIENCE: 'a' },
)!;

describe('a user\'s policy', () => {
  it('is everyone\'s without a group of its own', () => {
    expect(effectivePolicy(config, ['sales'])).toEqual({ allowedModels: ['small'], rpmLimit: 10, userBudgets: [{ period: 'day', limit: 100n }] });
  });

  it('takes each field its groups set from them, the most generous where several do', () => {
    expect(effectivePolicy(config, ['eng', 'research'])).toEqual({ allowedModels: ['big', 'huge'], rpmLimit: 60, userBudgets: [{ period: 'day', limit: 500n }] });
    expect(effectivePolicy(config, ['eng'])).toEqual({ allowedModels: ['big'], rpmLimit: 60, userBudgets: [{ period: 'day', limit: 100n }] });
  });

  it('reads nested claims by a dotted path (Keycloak\'s realm_access.roles)', () => {
    expect(readClaim({ realm_access: { roles: ['admin'] } }, 'realm_access.roles')).toEqual(['admin']);
  });
});
