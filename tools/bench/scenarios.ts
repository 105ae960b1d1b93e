import type { Target } from './load.js';

export type Client = 'chat' | 'messages';
export type Upstream = 'openai' | 'anthropic';

/**
 * One measured case: who serves it, which client protocol, which upstream protocol, streaming or
 * not. `switchyard` is the gateway as deployed (compiled, the bench's database); `embedded` is the
 * gateway as a user first starts it (`make run`: compiled, the embedded database in a data directory).
 */
export interface Case {
  server: 'switchyard' | 'embedded' | 'direct' | 'portkey';
  /** Embedded cases: which embedded database the gateway ran on. */
  database?: string;
  /** The gateway exported OpenTelemetry (traces, metrics, logs over OTLP) while measured. */
  telemetry?: boolean;
  /** Gateway cases: how many accounts the rotated keys belong to (1: one team's keys, one balance). */
  accounts?: number;
  client: Client;
  /** The upstream protocol the gateway speaks to the fake (the direct upstream: same as client). */
  upstream: Upstream;
  stream: boolean;
  target: Target;
}

export const SLOW_MODEL = 'bench-slow';

/** The catalog: one model per upstream protocol on the fake, priced so holds and settles do real sums. */
export function catalogYaml(fakeUrl: string, slowChunkDelayMs: number): string {
  return `providers:
  fake-openai: { type: openai, base_url: "${fakeUrl}/v1" }
  fake-anthropic: { type: anthropic, base_url: "${fakeUrl}" }
models:
  - id: bench-openai
    provider: fake-openai
    upstream_model: "words:20"
    price: { input: 1, output: 2 }
  - id: bench-anthropic
    provider: fake-anthropic
    upstream_model: "words:20"
    price: { input: 1, output: 2 }
  - id: ${SLOW_MODEL}
    provider: fake-openai
    upstream_model: "words:20?chunkDelayMs=${slowChunkDelayMs}"
    price: { input: 1, output: 2 }
`;
}

const PROMPT = 'Write twenty words about railway switchyards.';

/** The same body fits both protocols (max_tokens is required by messages, accepted by chat). */
export function requestBody(model: string, stream: boolean): string {
  const messages = [{ role: 'user', content: PROMPT }];
  return JSON.stringify({ model, messages, stream, max_tokens: 256 });
}

function clientHeaders(client: Client, key: string): Record<string, string> {
  return client === 'chat'
    ? { 'content-type': 'application/json', authorization: `Bearer ${key}` }
    : { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' };
}

const PATH: Record<Client, string> = { chat: '/v1/chat/completions', messages: '/v1/messages' };

/** Keys rotated per request under load (see Target.rotate), of `accounts` accounts. */
export function gatewayCase(
  origin: string, keys: string[], accounts: number, client: Client, upstream: Upstream, stream: boolean, server: 'switchyard' | 'embedded' = 'switchyard',
): Case {
  const model = upstream === 'openai' ? 'bench-openai' : 'bench-anthropic';
  const rotate = client === 'chat'
    ? { header: 'authorization', values: keys.map((k) => `Bearer ${k}`) }
    : { header: 'x-api-key', values: keys };
  return {
    server,
    accounts,
    client,
    upstream,
    stream,
    target: { origin, path: PATH[client], headers: clientHeaders(client, keys[0]), body: requestBody(model, stream), rotate },
  };
}

export function directCase(fakeUrl: string, client: Client, stream: boolean): Case {
  return {
    server: 'direct',
    client,
    upstream: client === 'chat' ? 'openai' : 'anthropic',
    stream,
    target: { origin: fakeUrl, path: PATH[client], headers: clientHeaders(client, 'sk-upstream'), body: requestBody('words:20', stream) },
  };
}

/** Portkey routes by header: the provider kind plus a custom host pointing at the fake. */
export function portkeyCase(origin: string, fakeUrl: string, client: Client, stream: boolean): Case {
  const provider = client === 'chat' ? 'openai' : 'anthropic';
  return {
    server: 'portkey',
    client,
    upstream: provider,
    stream,
    target: {
      origin,
      path: PATH[client],
      headers: { ...clientHeaders(client, 'sk-upstream'), 'x-portkey-provider': provider, 'x-portkey-custom-host': `${fakeUrl}/v1` },
      body: requestBody('words:20', stream),
    },
  };
}

/** True when a probe's answer is a complete answer of the case's client protocol. */
export function looksComplete(c: Case, status: number, text: string): boolean {
  if (status !== 200) return false;
  if (!c.stream) return c.client === 'chat' ? text.includes('"choices"') : text.includes('"content"');
  return c.client === 'chat' ? text.includes('data: [DONE]') : text.includes('message_stop');
}

export function caseLabel(c: Case): string {
  const mode = c.stream ? 'stream' : 'json';
  if (c.server === 'direct' || c.server === 'portkey') return `${c.server} ${c.client} ${mode}`;
  const same = (c.client === 'chat') === (c.upstream === 'openai');
  const accounts = c.accounts === 1 ? '1 account' : `${c.accounts} accounts`;
  const server = c.database ? `${c.server} ${c.database}` : c.server;
  return `${server} ${c.client}→${c.upstream} ${mode}${same ? '' : ' (cross)'}, ${accounts}${c.telemetry ? ', telemetry on' : ''}`;
}
