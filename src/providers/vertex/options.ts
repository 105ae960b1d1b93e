import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ProviderOptionsSpec } from '../types.js';
import type { VertexSettings } from './api.js';

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/**
 * `options:` of a Vertex provider: `project`, `location` (default `global`) and `credentials_file`.
 * Unset, the project comes from GOOGLE_CLOUD_PROJECT, then the credentials file's `project_id`; the
 * file from GOOGLE_APPLICATION_CREDENTIALS, else Application Default Credentials find their own
 * (gcloud's, or the metadata server's on Google Cloud). A file given is read at start-up, so a
 * missing or broken one stops the start with a message naming the entry.
 */
export const vertexOptions: ProviderOptionsSpec = {
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      project: { type: 'string', minLength: 1 },
      location: { type: 'string', pattern: '^[a-z0-9-]+$' },
      credentials_file: { type: 'string', minLength: 1 },
    },
  },
  build(raw, env) {
    const given = str(raw.credentials_file) ?? str(env.GOOGLE_APPLICATION_CREDENTIALS);
    const file = given === undefined ? undefined : path.resolve(given);
    const facts = file === undefined ? {} : readCredentials(file, raw.credentials_file !== undefined ? 'credentials_file' : 'GOOGLE_APPLICATION_CREDENTIALS');
    const project = str(raw.project) ?? str(env.GOOGLE_CLOUD_PROJECT) ?? facts.project;
    if (!project) {
      throw new Error('no Google Cloud project: set options.project, GOOGLE_CLOUD_PROJECT, or use a credentials file with a project_id');
    }
    const settings: VertexSettings = {
      project,
      location: str(raw.location) ?? 'global',
      ...(file !== undefined ? { credentialsFile: file } : {}),
      ...(facts.tokenUri !== undefined && facts.tokenUri !== GOOGLE_TOKEN_URL ? { tokenUri: facts.tokenUri } : {}),
    };
    return { ...settings };
  },
};

/** What the gateway needs of a credentials file (its secrets stay in the file, read by the auth library). */
function readCredentials(file: string, from: string): { project?: string; tokenUri?: string } {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code ?? 'not JSON';
    throw new Error(`${from} ${file} is not a readable credentials JSON file (${reason})`);
  }
  if (typeof json !== 'object' || json === null || typeof (json as { type?: unknown }).type !== 'string') {
    throw new Error(`${from} ${file} is not a Google credentials file (no "type")`);
  }
  const c = json as Record<string, unknown>;
  // Only the types whose fields the gateway reads itself: a credential file from elsewhere (an
  // external account runs programs or fetches URLs) is not trusted blindly, as Google advises.
  if (c.type === 'service_account' && (!str(c.client_email) || !str(c.private_key))) {
    throw new Error(`${from} ${file}: a service account needs client_email and private_key`);
  }
  if (c.type === 'authorized_user' && (!str(c.client_id) || !str(c.client_secret) || !str(c.refresh_token))) {
    throw new Error(`${from} ${file}: authorized_user credentials need client_id, client_secret and refresh_token`);
  }
  if (c.type !== 'service_account' && c.type !== 'authorized_user') {
    throw new Error(`${from} ${file}: credentials of type "${String(c.type)}" are not supported (a service_account key or authorized_user; unset for Application Default Credentials)`);
  }
  return { project: str(c.project_id) ?? str(c.quota_project_id), tokenUri: str(c.token_uri) };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
