/**
 * The credential scan of a run's captured logs (log-capture.ts): every line of every file is searched
 * for the exact credentials the tests registered and for the shapes a credential travels in, whatever
 * its value. A finding names the file, the line and the kind of secret, never the secret itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SECRETS_FILE_PREFIX, STARTED_MESSAGE, STARTS_FILE_PREFIX, type SecretKind } from './log-capture.js';

export interface Finding {
  file: string;
  /** 1-based. */
  line: number;
  kind: SecretKind | 'JWT' | 'bearer token' | 'key in a URL';
  /** The secret's first characters and its length: enough to tell which, not enough to use. */
  hint: string;
}

export interface ScanResult {
  files: number;
  lines: number;
  /** Gateways the helpers started, and the lines in which they said so through their own logger. */
  gatewaysStarted: number;
  startLinesSeen: number;
  findings: Finding[];
}

/** Credential shapes, whatever the value (the redaction's replacement `[redacted]` never matches). */
const SHAPES: Array<[Finding['kind'], RegExp]> = [
  // This gateway's client keys (src/ledger/ids.ts: sk-sy- and 43 base62), whole or most of one; the
  // 12-character display prefix is not a credential.
  ['client key', /\bsk-sy-[0-9A-Za-z]{20,}/g],
  // Providers' key formats: OpenAI's and Anthropic's sk-…, Google's API keys and OAuth tokens, AWS key ids.
  ['provider key', /\bsk-(?!sy-)[A-Za-z0-9_-]{12,}|\bAIza[0-9A-Za-z_-]{30,}|\bya29\.[0-9A-Za-z._-]{10,}|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ['provider key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/g],
  ['JWT', /\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g],
  // A token after `Bearer`: at least 8 characters, one of them not a letter (so prose such as
  // "Bearer authorization" is not one).
  ['bearer token', /\bBearer\s+(?!\[redacted\])(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/gi],
  ['key in a URL', /[?&](?:key|api[-_]?key|access_token|token)=(?!\[redacted\]|%5Bredacted%5D)[^&\s"'#\\]{8,}/gi],
];

function hint(secret: string): string {
  return `${secret.slice(0, Math.min(6, Math.floor(secret.length / 3)))}… (${secret.length} characters)`;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The registered credentials of every worker, by value. */
function readSecrets(dir: string, names: string[]): Map<string, SecretKind> {
  const secrets = new Map<string, SecretKind>();
  for (const name of names.filter((n) => n.startsWith(SECRETS_FILE_PREFIX))) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (!line) continue;
      const { kind, value } = JSON.parse(line) as { kind: SecretKind; value: string };
      secrets.set(value, kind);
    }
  }
  return secrets;
}

/** Scans every captured log in `dir` (extra credentials may be given besides those registered there). */
export function scanLogs(dir: string, extra: ReadonlyMap<string, SecretKind> = new Map()): ScanResult {
  const names = readdirSync(dir).sort();
  const secrets = new Map([...readSecrets(dir, names), ...extra]);
  // One alternation for the exact values, longest first so a key containing another is named whole.
  const values = [...secrets.keys()].sort((a, b) => b.length - a.length);
  const known = values.length ? new RegExp(values.map(escape).join('|'), 'g') : undefined;
  const result: ScanResult = { files: 0, lines: 0, gatewaysStarted: 0, startLinesSeen: 0, findings: [] };
  for (const name of names) {
    const text = readFileSync(join(dir, name), 'utf8');
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    if (name.startsWith(STARTS_FILE_PREFIX)) {
      result.gatewaysStarted += lines.length;
      continue;
    }
    if (name.startsWith(SECRETS_FILE_PREFIX)) continue;
    result.files += 1;
    result.lines += lines.length;
    lines.forEach((line, i) => {
      if (line.includes(STARTED_MESSAGE)) result.startLinesSeen += 1;
      const at = { file: name, line: i + 1 };
      for (const m of known ? line.matchAll(known) : []) result.findings.push({ ...at, kind: secrets.get(m[0])!, hint: hint(m[0]) });
      for (const [kind, shape] of SHAPES) {
        for (const m of line.matchAll(shape)) {
          // A registered value already named this one.
          if (secrets.has(m[0])) continue;
          result.findings.push({ ...at, kind, hint: hint(m[0]) });
        }
      }
    });
  }
  return result;
}

/** A finding as a report line. */
export function describeFinding(f: Finding): string {
  return `${f.file}:${f.line}: ${f.kind} ${f.hint}`;
}
