/** The console's only way to the server: same-origin JSON calls, the CSRF token on every write. */

export type Role = 'operator' | 'key_holder' | 'user';

export interface Session {
  role: Role;
  csrf_token: string;
  account_id: string | null;
  /** Who signed in through the identity provider (null: a key). */
  user: { id: string; name: string | null; subject: string; groups: string[] } | null;
  expires_at: string;
}

/** An error to show as is: the server's own message (the API's error body) or what went wrong on the way. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

let csrf = '';
let onSignedOut: () => void = () => undefined;

export function useSession(session: Session | undefined, signedOut: () => void): void {
  csrf = session?.csrf_token ?? '';
  onSignedOut = signedOut;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  } catch (e) {
    throw new ApiError(`the gateway could not be reached (${(e as Error).message})`, 0);
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const message = parsed?.error?.message ?? (text.slice(0, 200) || res.statusText);
    if (res.status === 401 && path !== '/console/session') onSignedOut();
    throw new ApiError(`${message} (HTTP ${res.status})`, res.status);
  }
  return parsed as T;
}

export const api = {
  get: <T>(path: string) => call<T>('GET', `/console/api${path}`),
  post: <T>(path: string, body: unknown) => call<T>('POST', `/console/api${path}`, body),
  patch: <T>(path: string, body: unknown) => call<T>('PATCH', `/console/api${path}`, body),
  del: <T>(path: string) => call<T>('DELETE', `/console/api${path}`),
  /** The session, or undefined (204) when nobody is signed in. */
  session: () => call<Session | undefined>('GET', '/console/session'),
  signIn: (key: string) => call<Session>('POST', '/console/session', { key }),
  signOut: () => call<void>('DELETE', '/console/session'),
  /** The identity provider's sign-in, when the gateway offers one (204, undefined, otherwise). */
  sso: () => call<{ name: string; login_url: string } | undefined>('GET', '/console/oidc'),
};

/** A query string from the defined values only. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
