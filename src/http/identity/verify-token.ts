import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { GatewayError } from '../../ir/index.js';
import type { IdentityConfig } from '../../config/identity.js';

/** A fetch of the signing keys after an unknown `kid` waits at least this long after the last one. */
const JWKS_COOLDOWN_MS = 30_000;
/** Keys are fetched again after this long even when every `kid` is known (keys roll over). */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** The issuer's discovery document or keys must answer within this. */
const FETCH_TIMEOUT_MS = 5_000;
/** A failed discovery is not tried again for this long: a flood of tokens cannot hammer the issuer. */
const DISCOVERY_RETRY_MS = 10_000;

/**
 * A credential shaped like a JSON Web Token (three base64url parts, the first a JSON object):
 * API keys never are, so the shape alone decides which check a credential gets.
 */
export function looksLikeJwt(credential: string): boolean {
  return credential.startsWith('eyJ') && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(credential);
}

/**
 * Checks identity-provider tokens (RFC 9068 access tokens or OpenID Connect ID tokens) as RFC 8725
 * asks: the signature against the issuer's published keys (remote JWKS, cached; fetched again on
 * an unknown `kid` at most once per 30 s), `alg` from an allow-list of asymmetric algorithms
 * (so neither `none` nor an HMAC keyed with the public key passes), `iss`, `aud`, and `exp`/`nbf`
 * within a small skew. A refusal is a 401 naming the reason, never quoting the token.
 */
export class TokenVerifier {
  private keys?: Promise<JWTVerifyGetKey>;
  private failedAt = 0;

  constructor(
    readonly config: IdentityConfig,
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly now: () => number = Date.now,
  ) {}

  async verify(token: string): Promise<JWTPayload> {
    const keys = await this.signingKeys();
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: this.config.algorithms,
        clockTolerance: this.config.clockSkewS,
        requiredClaims: ['exp', this.config.claims.user],
        currentDate: new Date(this.now()),
      });
      return payload;
    } catch (e) {
      throw refusal(e, this.config);
    }
  }

  /** The issuer's key set: from the configured URL, or the `jwks_uri` of its discovery document. */
  private signingKeys(): Promise<JWTVerifyGetKey> {
    if (this.keys) return this.keys;
    if (this.now() - this.failedAt < DISCOVERY_RETRY_MS) return Promise.reject(issuerUnreachable());
    const load = async () => {
      const url = this.config.jwksUrl ?? (await this.discoverJwksUri());
      return createRemoteJWKSet(new URL(url), { cooldownDuration: JWKS_COOLDOWN_MS, cacheMaxAge: JWKS_MAX_AGE_MS, timeoutDuration: FETCH_TIMEOUT_MS });
    };
    this.keys = load().catch((e) => {
      this.keys = undefined;
      this.failedAt = this.now();
      throw e instanceof GatewayError ? e : issuerUnreachable(e);
    });
    return this.keys;
  }

  private async discoverJwksUri(): Promise<string> {
    const url = `${this.config.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const res = await this.fetchImpl(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
    if (!res.ok) throw issuerUnreachable(new Error(`discovery answered ${res.status}`));
    const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was fetched for.
    if (doc.issuer !== this.config.issuer) throw issuerUnreachable(new Error(`the discovery document names issuer ${JSON.stringify(doc.issuer)}`));
    if (typeof doc.jwks_uri !== 'string') throw issuerUnreachable(new Error('the discovery document has no jwks_uri'));
    return doc.jwks_uri;
  }
}

function issuerUnreachable(cause?: unknown): GatewayError {
  return new GatewayError('unavailable', 'the identity provider\'s signing keys cannot be fetched now; retry shortly', { retryAfter: 5, cause });
}

/** Why a token was refused, in words a client's operator can act on. */
function refusal(e: unknown, config: IdentityConfig): GatewayError {
  const refuse = (reason: string) => new GatewayError('authentication', `invalid token: ${reason}`, { code: 'invalid_token', cause: e });
  if (e instanceof errors.JWTExpired) return refuse('it has expired (exp)');
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'nbf') return refuse('it is not valid yet (nbf)');
    if (e.claim === 'iss') return refuse(`it was not issued by ${config.issuer} (iss)`);
    if (e.claim === 'aud') return refuse(`it is not meant for this gateway (aud must be ${config.audience.join(' or ')})`);
    if (e.reason === 'missing') return refuse(`it has no ${e.claim} claim`);
    return refuse(`its ${e.claim} claim is not valid`);
  }
  if (e instanceof errors.JOSEAlgNotAllowed) return refuse(`its algorithm is not allowed (allowed: ${config.algorithms.join(', ')})`);
  if (e instanceof errors.JWKSNoMatchingKey) return refuse('it is signed with a key the issuer does not publish (kid)');
  if (e instanceof errors.JWSSignatureVerificationFailed) return refuse('its signature does not verify');
  if (e instanceof errors.JWKSTimeout) return issuerUnreachable(e);
  if (e instanceof errors.JWKSMultipleMatchingKeys) return refuse('it names no kid and several of the issuer\'s keys could have signed it');
  // The key set could not be fetched or read (a non-200 answer, a body that is no key set).
  if (e instanceof errors.JWKSInvalid || (e instanceof errors.JOSEError && e.code === 'ERR_JOSE_GENERIC')) return issuerUnreachable(e);
  if (e instanceof errors.JOSEError) return refuse('it is not a well-formed signed JWT');
  // A network failure while fetching the keys (jose lets fetch's own error through).
  return issuerUnreachable(e);
}
