import type { IdentityConfig } from '../../config/identity.js';
import { consoleSso, type ConsoleSso } from '../console/sign-in-oidc.js';
import type { Catalog } from '../../routing/catalog.js';
import { TokenVerifier } from './verify-token.js';

/**
 * The identity provider's settings in use and what is built from them: the token verifier (with
 * its cache of the issuer's keys) and the console's sign-in. Read at each request, so a reload
 * (SIGHUP) applies to the next one; settings equal to the running ones keep the running verifier
 * and the console sign-ins under way.
 */
export class IdentityInUse {
  tokens?: TokenVerifier;
  sso?: ConsoleSso;

  constructor(
    config: IdentityConfig | undefined,
    private readonly catalog: () => Catalog,
  ) {
    this.replace(config);
  }

  get config(): IdentityConfig | undefined {
    return this.tokens?.config;
  }

  /** Uses `next` from now on (undefined: API keys only); false when it equals the settings in use. */
  replace(next: IdentityConfig | undefined): boolean {
    if (this.tokens && next && settingsText(next) === settingsText(this.tokens.config)) return false;
    if (!this.tokens && !next) return false;
    this.tokens = next ? new TokenVerifier(next) : undefined;
    this.sso = next ? consoleSso(next, this.catalog) : undefined;
    return true;
  }
}

/** The settings as text, to compare (budgets are bigints, which JSON does not take as they are). */
function settingsText(config: IdentityConfig): string {
  return JSON.stringify(config, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}
