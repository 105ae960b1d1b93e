import type { BillingHints } from '../../ir/request.js';
import { isRecord, type JsonObject } from '../shared/json.js';

/**
 * Uses of a server tool the hold assumes when its definition sets no `max_uses`: Anthropic sets
 * no limit of its own, and a turn rarely searches more; what goes past it is billed as a debt.
 */
export const ASSUMED_SERVER_TOOL_USES = 10;

/** A server tool's type (`web_search_20250305`) -> the name its per-use fee is priced under. */
function toolKind(type: unknown): string | undefined {
  if (typeof type !== 'string') return undefined;
  const m = /^(web_search|web_fetch|code_execution)_\d+$/.exec(type);
  return m?.[1];
}

function asksOneHour(block: unknown): boolean {
  return isRecord(block) && isRecord(block.cache_control) && block.cache_control.ttl === '1h';
}

/**
 * What a Messages request may be billed for beyond its tokens: a one-hour cache write when any
 * `cache_control` (the request's own, a system, message or tool block's) asks for `ttl: "1h"`,
 * and the uses its server tools allow. Read by the hold only.
 */
export function billingHints(body: JsonObject): BillingHints | undefined {
  const blocks: unknown[] = [body, ...(Array.isArray(body.system) ? body.system : []), ...(Array.isArray(body.tools) ? body.tools : [])];
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (isRecord(m) && Array.isArray(m.content)) blocks.push(...m.content);
  }
  const hints: BillingHints = {};
  if (blocks.some(asksOneHour)) hints.cacheWrite1h = true;
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    const kind = isRecord(t) ? toolKind(t.type) : undefined;
    if (!kind) continue;
    const uses = typeof t.max_uses === 'number' && Number.isSafeInteger(t.max_uses) && t.max_uses >= 0 ? t.max_uses : ASSUMED_SERVER_TOOL_USES;
    (hints.serverToolUses ??= {})[kind] = (hints.serverToolUses[kind] ?? 0) + uses;
  }
  return Object.keys(hints).length ? hints : undefined;
}
