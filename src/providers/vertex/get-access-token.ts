import { readFileSync } from 'node:fs';
import { GoogleAuth, JWT, UserRefreshClient, type AuthClient, type OAuth2ClientOptions } from 'google-auth-library';
import { GatewayError } from '../../ir/index.js';
import type { ProviderConfig } from '../types.js';
import { CLOUD_PLATFORM_SCOPE, settingsOf, type VertexSettings } from './api.js';

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/**
 * One auth client per provider (per its credentials), created on first use. The library caches
 * the access token and gets a new one before it expires (5 minutes ahead), so every try of a
 * call (`sign`) asks it for the current token.
 */
const clients = new Map<string, { key: string; client: Promise<AuthClient> }>();

/** The `sign` of a Vertex exchange: `Authorization: Bearer <access token>`, per try. */
export function bearerSigner(provider: ProviderConfig): () => Promise<Record<string, string>> {
  return async () => ({ authorization: `Bearer ${await accessToken(provider)}` });
}

export async function accessToken(provider: ProviderConfig): Promise<string> {
  let token: string | null | undefined;
  try {
    const client = await clientFor(provider);
    token = (await client.getAccessToken()).token;
  } catch (e) {
    throw tokenError(e);
  }
  if (!token) throw new GatewayError('bad_gateway', 'could not get a Google access token for the upstream: the credentials gave none', { code: 'google_token_unavailable' });
  return token;
}

/**
 * Drop the provider's client and the token it holds: the next call builds a new one, which asks
 * the token endpoint afresh (a token Vertex refused, revoked before its expiry, is not reused).
 */
export function forgetCredentials(provider: ProviderConfig): void {
  clients.delete(provider.id);
}

function clientFor(provider: ProviderConfig): Promise<AuthClient> {
  const settings = settingsOf(provider);
  const key = JSON.stringify([settings.credentialsFile, settings.tokenUri]);
  const hit = clients.get(provider.id);
  if (hit?.key === key) return hit.client;
  const client = createClient(settings, { transporterOptions: { timeout: provider.timeouts.firstByteMs, fetchImplementation: tokenFetch(settings) } });
  // A client that could not be made is not kept: the next call tries again.
  client.catch(() => clients.delete(provider.id));
  clients.set(provider.id, { key, client });
  return client;
}

/**
 * The credentials file's client, built from the fields of its type (the file was checked at
 * start-up: a service account key or a gcloud user's refresh token); without a file,
 * Application Default Credentials (gcloud's, or the metadata server's on Google Cloud).
 */
async function createClient(settings: VertexSettings, options: OAuth2ClientOptions): Promise<AuthClient> {
  if (!settings.credentialsFile) return new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE], clientOptions: options }).getClient();
  const c = JSON.parse(readFileSync(settings.credentialsFile, 'utf8')) as Record<string, string | undefined>;
  if (c.type === 'authorized_user') {
    return new UserRefreshClient({ ...options, clientId: c.client_id, clientSecret: c.client_secret, refreshToken: c.refresh_token });
  }
  return new JWT({ ...options, email: c.client_email, key: c.private_key, keyId: c.private_key_id, scopes: [CLOUD_PLATFORM_SCOPE] });
}

/**
 * The auth library posts service-account assertions to Google's token URL; a credentials file
 * whose `token_uri` names another endpoint (a private one, a test's) is sent there instead.
 */
function tokenFetch(settings: VertexSettings): typeof fetch {
  const target = settings.tokenUri;
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return fetch(target && url === GOOGLE_TOKEN_URL ? target : input, init);
  };
}

/**
 * A token failure, in words a client can read and no internals: the token endpoint refusing the
 * credentials (4xx) is the gateway's credentials rejected (401); an endpoint that failed or could
 * not be reached is a 502 another try may cure; credentials that cannot be found or read, a 502 too.
 */
function tokenError(e: unknown): GatewayError {
  const res = (e as { response?: { status?: unknown; data?: unknown } }).response;
  const status = typeof res?.status === 'number' ? res.status : undefined;
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    const data = typeof res?.data === 'object' && res.data !== null ? (res.data as Record<string, unknown>) : {};
    const reason = [data.error, data.error_description].filter((v) => typeof v === 'string' && v).join(': ');
    return new GatewayError('authentication', `upstream rejected the gateway's credentials: Google's token endpoint refused them${reason ? ` (${reason})` : ''}`, {
      code: 'google_credentials_rejected',
      details: { upstream: { provider: 'google-oauth', status } },
      cause: e,
    });
  }
  if (status !== undefined || isTransportError(e)) {
    return new GatewayError('bad_gateway', `could not get a Google access token for the upstream: the token endpoint ${status ? `answered HTTP ${status}` : 'could not be reached'}`, {
      code: 'google_token_unavailable',
      retryable: true,
      cause: e,
    });
  }
  return new GatewayError('bad_gateway', 'could not get a Google access token for the upstream: no usable Google credentials are configured', {
    code: 'google_credentials_missing',
    cause: e,
  });
}

/** The auth library's request failures (a GaxiosError) that got no answer: refused, reset, timed out. */
function isTransportError(e: unknown): boolean {
  return typeof e === 'object' && e !== null && 'config' in e && (e as { response?: unknown }).response === undefined;
}
