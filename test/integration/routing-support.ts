/**
 * Helpers shared by the routing, fallback and ceiling suites: raw HTTP calls that keep the
 * headers, ledger lookups per request, and a Responses stream checker (chat and messages streams
 * are checked by test/support/stream-checks.ts).
 */
import { expect } from 'vitest';
import { roundUpToNanos, type JournalEntry } from '../../src/ledger/index.js';
import type { Price } from '../../src/routing/catalog.js';
import { bodyErrors, parseSseText, schemaErrors } from '../support/stream-checks.js';
import type { TestGateway } from '../support/gateway.js';

export const TRIGGER = 'ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL_1FAEFB6177B4672DEE07F9D3AFC62588CCD2631EDCF22E8CCC1FB35B501C9C86';

export const OPERATION: Record<string, string> = {
  '/v1/chat/completions': 'createChatCompletion',
  '/v1/messages': 'createMessage',
  '/v1/responses': 'createResponse',
};

export interface Posted {
  status: number;
  headers: Headers;
  requestId: string;
  /** Parsed JSON for a JSON answer, the raw text for a stream. */
  body: any;
  text: string;
}

/** POSTs with both protocols' auth headers; validates a JSON body against the document. */
export async function post(gw: TestGateway, path: string, body: Record<string, unknown>): Promise<Posted> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const isJson = (res.headers.get('content-type') ?? '').includes('json');
  const parsed = isJson ? JSON.parse(text) : text;
  if (isJson) expect(await bodyErrors(OPERATION[path], res.status, parsed), `${path} ${res.status} body`).toEqual([]);
  return { status: res.status, headers: res.headers, requestId: res.headers.get('x-request-id') ?? '', body: parsed, text };
}

/** Every Responses stream event validates against ResponseStreamEvent; returns the payloads. */
export async function checkResponsesStream(text: string): Promise<any[]> {
  const out: any[] = [];
  for (const ev of parseSseText(text)) {
    const data = JSON.parse(ev.data);
    expect(ev.event).toBe(data.type);
    expect(await schemaErrors('ResponseStreamEvent', data), data.type).toEqual([]);
    out.push(data);
  }
  return out;
}

/** The capture lines of one request, oldest first (settlement may trail the last byte slightly). */
export async function capturesOf(gw: TestGateway, requestId: string, expected: number): Promise<JournalEntry[]> {
  for (let i = 0; i < 50; i++) {
    const lines = (await gw.ledger.ledgerEntries(gw.accountId, 500)).filter((e) => e.requestId === requestId && e.kind === 'capture');
    if (lines.length >= expected) return lines.reverse();
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`request ${requestId}: fewer than ${expected} capture lines`);
}

/** A capture line's cost recomputed from its tokens at `price`. */
export function priced(e: JournalEntry, price: Price): bigint {
  const t = e.tokens!;
  return roundUpToNanos(t.inputNoCache * price.input + t.inputCacheRead * price.cacheRead + t.inputCacheWrite * price.cacheWrite + t.output * price.output);
}

export const userTurn = (text: string) => [{ role: 'user' as const, content: text }];
