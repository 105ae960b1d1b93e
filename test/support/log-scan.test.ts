/**
 * The run's credential scan (log-scan.ts) finds what is planted in a capture folder: a registered
 * credential by its exact value, and every shape a key or token travels in, naming file, line and
 * kind and never the secret; what the redaction leaves (`[redacted]`, a key's display prefix) passes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newApiKey } from '../../src/ledger/ids.js';
import { SECRETS_FILE_PREFIX, STARTS_FILE_PREFIX, STARTED_MESSAGE } from './log-capture.js';
import { describeFinding, scanLogs } from './log-scan.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function folder(files: Record<string, string[]>): string {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-log-scan-test-'));
  for (const [name, lines] of Object.entries(files)) writeFileSync(join(dir, name), lines.map((l) => `${l}\n`).join(''));
  return dir;
}

const line = (msg: string, extra: Record<string, unknown> = {}) => JSON.stringify({ level: 30, time: 1, msg, ...extra });

describe('the log scan', () => {
  const clientKey = newApiKey();
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEiLCJpc3MiOiJodHRwOi8vaWRwIn0.c2lnbmF0dXJlLWJ5dGVz';
  const planted: Array<[string, string]> = [
    ['client key', line('request failed', { err: { message: `refused ${clientKey}` } })],
    ['client key', line('shortened', { key: clientKey.slice(0, -4) })],
    ['provider key', line('upstream said', { body: 'it came with x-api-key=sk-ant-api03-abcdefghijklmnop' })],
    ['provider key', line('gemini', { err: 'AIzaSyA1234567890abcdefghijklmnopqrstu refused' })],
    ['JWT', line('sign-in', { token: jwt })],
    ['bearer token', line('echo', { message: 'authorization=Bearer opaque.token-value_1' })],
    ['key in a URL', line('fetch failed', { url: 'https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?alt=sse&key=opaque-gemini-value' })],
    ['admin key', line('refused', { presented: 'operator-admin-secret' })],
  ];

  it('finds each planted credential, naming file, line and kind but not the secret', () => {
    const clean = [
      line('request', { key_prefix: clientKey.slice(0, 12), status: 200 }),
      line('request failed', { err: { message: 'authorization=Bearer [redacted] x-api-key=[redacted]' } }),
      line('refused', { url: 'https://example.test/v1?key=[redacted]' }),
      line('a Bearer authorization header is required'),
    ];
    const result = scanLogs(
      folder({
        'in-process-1.log': [...clean, ...planted.map(([, l]) => l)],
        [`${SECRETS_FILE_PREFIX}1.jsonl`]: [JSON.stringify({ kind: 'admin key', value: 'operator-admin-secret' })],
      }),
    );
    expect(result.lines).toBe(clean.length + planted.length);
    expect(result.files).toBe(1);
    expect(result.findings.map((f) => [f.kind, f.file, f.line])).toEqual(planted.map(([kind], i) => [kind, 'in-process-1.log', clean.length + i + 1]));
    const report = result.findings.map(describeFinding).join('\n');
    expect(report).toContain(`in-process-1.log:${clean.length + 1}: client key sk-sy-… (49 characters)`);
    for (const secret of [clientKey, clientKey.slice(0, -4), jwt, 'opaque.token-value_1', 'operator-admin-secret', 'opaque-gemini-value', 'sk-ant-api03-abcdefghijklmnop']) {
      expect(report).not.toContain(secret);
    }
  });

  it('counts the gateways the helpers started and the start lines their loggers wrote', () => {
    const result = scanLogs(
      folder({
        [`${STARTS_FILE_PREFIX}1.log`]: ['{"label":"a"}', '{"label":"b"}'],
        'in-process-1.log': [line(STARTED_MESSAGE, { label: 'a' }), line('request')],
        'serve-1-1.log': [line('switchyard is listening')],
      }),
    );
    expect(result).toMatchObject({ files: 2, lines: 3, gatewaysStarted: 2, startLinesSeen: 1, findings: [] });
  });
});
