import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface ServiceAccount {
  /** The credentials JSON file (as GOOGLE_APPLICATION_CREDENTIALS names one). */
  file: string;
  /** The public half of its key, for the fake upstream's token endpoint. */
  publicKey: string;
  clientEmail: string;
}

/**
 * A throwaway Google service account: a fresh RSA key pair and a credentials file whose
 * `token_uri` is the given endpoint (the fake upstream's `/oauth2/token`).
 */
export function writeServiceAccount(tokenUri: string, opts: { projectId?: string } = {}): ServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientEmail = 'switchyard@switchyard-test.iam.gserviceaccount.com';
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-sa-')), 'service-account.json');
  const credentials = {
    type: 'service_account',
    ...(opts.projectId === undefined ? {} : { project_id: opts.projectId }),
    private_key_id: 'fake-key-1',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: '100000000000000000001',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUri,
    universe_domain: 'googleapis.com',
  };
  writeFileSync(file, JSON.stringify(credentials, null, 2), { mode: 0o600 });
  return { file, publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(), clientEmail };
}
