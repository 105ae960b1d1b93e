/**
 * Stored Responses, the pure part: turning a request's `input` into items with ids, replacing
 * `item_reference` items by the stored items they name, and paging a response's input items.
 * The handler (handlers/responses.ts) does the lookups.
 */
import { GatewayError } from '../../ir/index.js';

type Json = Record<string, unknown>;

/** `input` as a list of items: a string is one user message, as the API reads it. */
export function inputItemsOf(input: unknown): Json[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return Array.isArray(input) ? (input as Json[]) : [];
}

/** The ids the `item_reference` items name. */
export function referencedIds(items: Json[]): string[] {
  return items.flatMap((i) => (i.type === 'item_reference' && typeof i.id === 'string' ? [i.id] : []));
}

/**
 * Each `item_reference` replaced by the stored item it names; one that names nothing stored for
 * this account is a 404 naming its place (a silently dropped item would lose the conversation).
 */
export function resolveReferences(items: Json[], stored: Map<string, Json>): Json[] {
  return items.map((item, i) => {
    if (item.type !== 'item_reference') return item;
    const found = typeof item.id === 'string' ? stored.get(item.id) : undefined;
    if (!found) {
      throw new GatewayError('not_found', `Item with id '${String(item.id)}' not found: it is not an item of a stored response of this account (or it expired or was deleted)`, {
        param: `input.${i}`,
      });
    }
    return found;
  });
}

/** Items given ids where they have none (`in_<base>_<i>`), so each can be listed and referenced. */
export function withIds(items: Json[], base: string): Json[] {
  return items.map((item, i) => (typeof item.id === 'string' && item.id !== '' ? item : { id: `in_${base}_${i}`, ...item }));
}

export interface ItemPageQuery {
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
}

/** One page of a response's input items (newest first by default), as OpenAI's list shape. */
export function pageInputItems(items: Json[], q: ItemPageQuery): Json {
  const ordered = q.order === 'asc' ? items : [...items].reverse();
  let start = 0;
  if (q.after !== undefined) {
    const at = ordered.findIndex((i) => i.id === q.after);
    if (at < 0) throw new GatewayError('invalid_request', `after: no input item '${q.after}' in this response`, { param: 'after' });
    start = at + 1;
  }
  const data = ordered.slice(start, start + q.limit);
  return {
    object: 'list',
    data,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data.at(-1)?.id as string | undefined) ?? null,
    has_more: start + q.limit < ordered.length,
  };
}
