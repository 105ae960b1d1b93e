import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { buildIdentityConfig } from './identity.js';

describe('identity config', () => {
  it('is absent without an issuer', () => {
    expect(buildIdentityConfig(undefined, {})).toBeUndefined();
  });

  it('the environment alone is enough: issuer, audience (comma-separated), default discovery', () => {
    const c = buildIdentityConfig(undefined, { SWITCHYARD_OIDC_ISSUER: 'https://idp.example', SWITCHYARD_OIDC_AUDIENCE: 'api://switchyard, desktop' })!;
    expect(c).toMatchObject({ issuer: 'https://idp.example', audience: ['api://switchyard', 'desktop'], jwksUrl: undefined, clockSkewS: 30 });
    expect(c.algorithms).not.toContain('none');
    expect(c.algorithms.some((a) => a.startsWith('HS'))).toBe(false);
  });

  it('the variables win over the file', () => {
    const c = buildIdentityConfig({ issuer: 'https://file.example', audience: 'file' }, { SWITCHYARD_OIDC_ISSUER: 'https://env.example', SWITCHYARD_OIDC_JWKS_URL: 'https://env.example/keys' })!;
    expect(c).toMatchObject({ issuer: 'https://env.example', audience: ['file'], jwksUrl: 'https://env.example/keys' });
  });

  it('refuses an issuer without an audience, HS256 in the allow-list, and a budget that is not a positive integer', () => {
    expect(() => buildIdentityConfig(undefined, { SWITCHYARD_OIDC_ISSUER: 'https://idp.example' })).toThrow(/audience/);
    expect(() => buildIdentityConfig({ issuer: 'https://i.example', audience: 'a', algorithms: ['HS256'] }, {})).toThrow(ConfigError);
    expect(() => buildIdentityConfig({ issuer: 'https://i.example', audience: 'a', groups: { g: { budgets: [{ period: 'day', limit: '-5' }] } } }, {})).toThrow(/positive/);
    expect(() => buildIdentityConfig({ issuer: 'https://i.example', audience: 'a', users: { budgets: [{ period: 'day', limit: 5 }] } }, {})).toThrow(ConfigError);
  });
});
