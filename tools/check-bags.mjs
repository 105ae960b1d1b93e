// Fails when code reads a client protocol's extension bag outside that protocol: its key
// (CHAT_EXT, MESSAGES_EXT, RESPONSES_EXT, or the literal key after `ext`) may be named only in
// src/ir/ (where the keys and the bags' types are defined), in the protocol's own folder (its
// decoder writes the bag, its client encoders read it) and in the folder of a provider that
// declares the protocol as its `nativeProtocol` (same-protocol passthrough). What another layer
// needs to know about a request travels in the IR proper (Request.nativeOnly, Request.dropped, ...).
// Usage: node tools/check-bags.mjs [root (default src)]
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { linesOutside, sourceFiles } from './source-files.mjs';

const root = process.argv[2] ?? 'src';

/** Each bag key: its value and the protocol folder that owns it. */
const BAGS = {
  CHAT_EXT: { key: 'openai-chat', protocol: 'openai-chat' },
  MESSAGES_EXT: { key: 'anthropic', protocol: 'anthropic-messages' },
  RESPONSES_EXT: { key: 'openai-responses', protocol: 'openai-responses' },
};

/** The provider folders declaring `nativeProtocol: <constant>`, by constant. */
function nativeProviders() {
  const out = Object.fromEntries(Object.keys(BAGS).map((name) => [name, new Set()]));
  const providers = join(root, 'providers');
  for (const path of sourceFiles(providers)) {
    const [folder, ...rest] = relative(providers, path).split(sep);
    if (rest.length === 0) continue;
    for (const m of readFileSync(path, 'utf8').matchAll(/\bnativeProtocol\s*:\s*(CHAT_EXT|MESSAGES_EXT|RESPONSES_EXT)\b/g)) out[m[1]].add(folder);
  }
  return out;
}

const escape = (s) => s.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&');

/** A line naming the bag: the constant, `ext['key']` / `ext?.['key']`, `ext.key` / `ext?.key`, or `{ key } = ...ext`. */
function readsOf(name, key) {
  const quoted = `(['"\`])${escape(key)}\\1`;
  const patterns = [new RegExp(`\\b${name}\\b`), new RegExp(`\\bext\\s*\\??\\.?\\s*\\[\\s*${quoted}\\s*\\]`)];
  if (/^[A-Za-z_$][\w$]*$/.test(key)) {
    patterns.push(new RegExp(`\\bext\\s*\\??\\.\\s*${key}\\b`), new RegExp(`\\{[^}]*\\b${key}\\b[^}]*\\}\\s*=\\s*[\\w.?]*\\bext\\b`));
  } else {
    patterns.push(new RegExp(`\\{[^}]*${quoted}[^}]*\\}\\s*=\\s*[\\w.?]*\\bext\\b`));
  }
  return patterns;
}

const native = nativeProviders();
const problems = [];
for (const [name, { key, protocol }] of Object.entries(BAGS)) {
  const owners = [`protocols/${protocol}`, ...[...native[name]].map((p) => `providers/${p}`)];
  const allowed = [/^ir\//, ...owners.map((o) => new RegExp(`^${escape(o)}/`))];
  const found = linesOutside(root, allowed, readsOf(name, key));
  if (found.length) problems.push(`${name} ('${key}') outside ${owners.map((o) => `src/${o}/`).join(', ')}:\n${found.join('\n')}`);
}
if (problems.length > 0) {
  console.error(`extension bags read outside their protocol (only its decoder writes a bag, only its encoders and its native providers read it; put what another layer needs in the IR proper):\n${problems.join('\n')}`);
  process.exit(1);
}
const counts = Object.entries(native).map(([name, set]) => `${name}: ${[...set].join(', ') || 'none'}`).join('; ');
console.log(`extension bags: each read only in its protocol and its native providers (${counts})`);
