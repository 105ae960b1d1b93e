/** What the generated-SDK tests share: the document's operations, their success statuses, a strict type-check. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { DOCUMENT_PATH } from '../../src/http/openapi-document.js';
import { buildIdentityConfig, type IdentityConfig } from '../../src/config/identity.js';
import type { TestGateway } from '../support/gateway.js';

/** Every operationId of the published document. */
export function documentOperationIds(): string[] {
  const document = parse(readFileSync(DOCUMENT_PATH, 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
  return Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId).filter((id): id is string => !!id));
}

const CREATED: Record<string, number> = { adminCreateAccount: 201, adminCreateKey: 201 };

/** The status an operation answers when it succeeds. */
export const successStatus = (operationId: string): number => CREATED[operationId] ?? 200;

/** The project's tsc over a generated client's strict program: its errors ('' when none). */
export function strictTypeErrors(tsconfigPath: string): string {
  const tsc = fileURLToPath(new URL('../../node_modules/.bin/tsc', import.meta.url));
  try {
    execFileSync(tsc, ['--noEmit', '-p', tsconfigPath], { encoding: 'utf8' });
    return '';
  } catch (e: any) {
    return String(e.stdout ?? e);
  }
}

/**
 * A user as the identity provider's first token would record it (users exist only through sign-in),
 * so the program can change one through the admin API; its id.
 */
export async function seedUser(gw: TestGateway): Promise<string> {
  const user = { id: 'usr_sdk_program', issuer: 'https://idp.example', subject: 'sdk', name: 'sdk@example.com', groups: [], organization: null, admin: false };
  return (await gw.ledger.seeUser(user, gw.accountId)).id;
}

/** The group the programs read the budgets of (adminGetGroupBudgets answers 404 for a group the config does not name). */
export const SDK_GROUP = 'sdk-group';

/**
 * Sign-in settings naming SDK_GROUP with a budget, so that every admin operation has something to
 * answer. No token is verified by the programs, so the issuer is never asked for its keys.
 */
export function sdkIdentity(): IdentityConfig {
  return buildIdentityConfig(
    { issuer: 'https://idp.example', audience: 'switchyard', jwks_url: 'https://idp.example/jwks', groups: { [SDK_GROUP]: { budgets: [{ period: 'day', limit: 1_000_000 }] } } },
    {},
  )!;
}
