/**
 * What `switchyard serve --demo` (`make run`) prints for a person before its JSON log begins: where
 * the gateway listens, the demo key, the console, and README's four requests with the key filled in.
 */
import type { DestinationStream } from 'pino';

export interface DemoDetails {
  url: string;
  key: string;
  accountId: string;
  /** Nanodollars. */
  balance: bigint;
  /** Whether SWITCHYARD_ADMIN_KEY is set (the admin API and the console's operator sign-in). */
  adminKey: boolean;
  /** The model of the chat and messages requests, and the one of the Responses request. */
  model: string;
  smallModel: string;
}

const NANODOLLARS_PER_CENT = 10_000_000n;

/** Whole cents, rounded down: `$10.00`. */
export function formatDollars(nanodollars: bigint): string {
  const cents = nanodollars / NANODOLLARS_PER_CENT;
  return `$${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;
}

export function demoBanner(d: DemoDetails): string {
  const console = d.adminKey
    ? `${d.url}/console (sign in with this key; as the operator, with SWITCHYARD_ADMIN_KEY)`
    : `${d.url}/console (sign in with this key)`;
  const admin = d.adminKey ? 'on (Authorization: Bearer $SWITCHYARD_ADMIN_KEY)' : 'off (set SWITCHYARD_ADMIN_KEY to manage accounts and keys)';
  const bearer = `-H "Authorization: Bearer ${d.key}"`;
  const json = '-H "Content-Type: application/json"';
  return `
Switchyard is ready.

  OpenAI-compatible base URL:    ${d.url}/v1
  Anthropic-compatible base URL: ${d.url}
  API key (demo account ${d.accountId}, balance ${formatDollars(d.balance)} = ${d.balance} nanodollars):
    ${d.key}
  Web console:                   ${console}
  Admin API:                     ${admin}

Try it:

  # OpenAI chat completions, streamed
  curl -sN ${d.url}/v1/chat/completions \\
    ${bearer} ${json} \\
    -d '{"model":"${d.model}","stream":true,"messages":[{"role":"user","content":"Hello!"}]}'

  # Anthropic messages, with extended thinking
  curl -s ${d.url}/v1/messages \\
    -H "x-api-key: ${d.key}" -H "anthropic-version: 2023-06-01" ${json} \\
    -d '{"model":"${d.model}","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"Hello!"}]}'

  # OpenAI Responses
  curl -s ${d.url}/v1/responses \\
    ${bearer} ${json} \\
    -d '{"model":"${d.smallModel}","input":"Hello!"}'

  # Your balance (nanodollars: 1e-9 USD)
  curl -s ${d.url}/v1/balance ${bearer}

The log follows, one JSON line per event (LOG_LEVEL=warn for fewer).

`;
}

/**
 * A log destination that keeps what is written until `release()`, then writes through to `out`:
 * the start's log lines come after the banner instead of around it.
 */
export class HeldOutput implements DestinationStream {
  private held: string[] | undefined = [];

  constructor(private readonly out: { write(text: string): unknown }) {}

  write(line: string): void {
    if (this.held) this.held.push(line);
    else this.out.write(line);
  }

  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    if (held.length > 0) this.out.write(held.join(''));
  }
}
