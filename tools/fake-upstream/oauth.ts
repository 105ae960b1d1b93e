import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/**
 * Google's OAuth token endpoint as a service account meets it (`grant_type` jwt-bearer, an RS256
 * `assertion` signed with the account's private key), and the bearer tokens it hands out. The
 * Vertex routes take only a token issued here and not yet expired, as Vertex answers 401 otherwise.
 */
export interface OAuthOptions {
  /** The service account's public key (PEM or KeyObject): assertions are verified against it. */
  publicKey: string | KeyObject;
  /** `expires_in` of the tokens issued (seconds; default 3600). */
  expiresIn?: number;
}

export interface TokenRequest {
  /** The assertion's claims (`iss`, `scope`, `aud`, `iat`, `exp`) when it was well-formed. */
  claims?: Record<string, unknown>;
  /** The token issued, or undefined when the assertion was refused. */
  token?: string;
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

export class FakeOAuth {
  readonly requests: TokenRequest[] = [];
  private key?: KeyObject;
  private expiresIn = 3600;
  private readonly issued = new Map<string, number>();

  configure(opts: OAuthOptions | undefined): void {
    this.key = opts === undefined ? undefined : typeof opts.publicKey === 'string' ? createPublicKey(opts.publicKey) : opts.publicKey;
    this.expiresIn = opts?.expiresIn ?? 3600;
  }

  reset(): void {
    this.requests.length = 0;
  }

  /** A form-encoded token request -> the endpoint's answer. */
  exchange(form: string): TokenAnswer {
    const params = new URLSearchParams(form);
    const record: TokenRequest = {};
    this.requests.push(record);
    if (params.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return refuse('unsupported_grant_type', 'Invalid grant_type');
    }
    const parts = (params.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return refuse('invalid_grant', 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe');
    const [header, payload, signature] = parts;
    const claims = parseSegment(payload);
    if (claims) record.claims = claims;
    if (parseSegment(header)?.alg !== 'RS256' || !claims) return refuse('invalid_grant', 'Invalid JWT: malformed header or claims');
    const signed = this.key !== undefined && verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), this.key, Buffer.from(signature, 'base64url'));
    if (!signed) return refuse('invalid_grant', 'Invalid JWT Signature.');
    if (typeof claims.scope !== 'string' || !claims.scope.includes('cloud-platform')) return refuse('invalid_scope', 'The cloud-platform scope is required');
    const token = `ya29.fake-${this.issued.size + 1}`;
    this.issued.set(token, Date.now() + this.expiresIn * 1000);
    record.token = token;
    return { status: 200, body: { access_token: token, expires_in: this.expiresIn, token_type: 'Bearer' } };
  }

  /** Every token issued so far stops being accepted (revoked credentials). */
  revoke(): void {
    for (const token of this.issued.keys()) this.issued.set(token, 0);
  }

  /** True when `authorization` carries a token issued here that has not expired. */
  admits(authorization: string | undefined): boolean {
    const m = /^Bearer (\S+)$/.exec(authorization ?? '');
    const until = m ? this.issued.get(m[1]) : undefined;
    return until !== undefined && until > Date.now();
  }
}

function refuse(error: string, description: string): TokenAnswer {
  return { status: 400, body: { error, error_description: description } };
}

function parseSegment(segment: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
