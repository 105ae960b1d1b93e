/**
 * Decides which tools the local model calls, and with what arguments.
 *
 * With `tool_choice` auto, a tool is called when the last message is the user's and names it:
 * its name (`get_weather`, or `get weather`), a distinctive part of the name (`weather`), or a
 * distinctive word of its description. `required` calls the mentioned tools, else the first
 * tool; `{type:'tool'}` calls that tool; `none` calls nothing. Several mentioned tools are
 * called in parallel unless `parallelToolCalls` is false. A choice's `allowed` list limits all of
 * this to those tools.
 */
import { allowedTools, type Request, type Tool } from '../../ir/index.js';
import type { Conversation } from './read-conversation.js';
import { argsForSchema, type StringSource } from './schema-args.js';

export interface PlannedCall {
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

const GENERIC = new Set([
  'get', 'set', 'list', 'fetch', 'make', 'create', 'update', 'delete', 'find', 'run', 'call', 'tool',
  'data', 'info', 'the', 'for', 'and', 'with', 'from', 'about', 'which', 'their', 'there', 'these',
  'would', 'could', 'should', 'given', 'return', 'returns', 'using', 'value', 'values', 'current',
  'specified', 'specific', 'provided', 'input', 'output', 'function', 'string', 'number', 'object',
  'optional', 'required', 'other', 'after', 'before', 'where', 'while', 'user', 'users', 'retrieve',
  'retrieves', 'gets', 'this', 'that', 'information', 'details',
]);

export function pickToolCalls(req: Request, conv: Conversation): PlannedCall[] {
  const choice = req.toolChoice ?? { type: 'auto' };
  const allowed = allowedTools(choice);
  const tools = allowed ? req.tools.filter((t) => allowed.includes(t.name)) : req.tools;
  if (tools.length === 0 || choice.type === 'none') return [];
  let chosen: Tool[];
  if (choice.type === 'tool') {
    chosen = req.tools.filter((t) => t.name === choice.name).slice(0, 1);
  } else {
    const mentioned = conv.lastRole === 'user' ? tools.filter((t) => mentions(t, conv.lastUserText)) : [];
    chosen = mentioned.length === 0 && choice.type === 'required' ? tools.slice(0, 1) : mentioned;
    if (req.parallelToolCalls === false) chosen = chosen.slice(0, 1);
  }
  const strings = userStrings(conv.lastUserText, req.tools);
  return chosen.map((t) => ({ name: t.name, arguments: JSON.stringify(argsForSchema(t.inputSchema, strings)) }));
}

/** True when the user's text names the tool or a distinctive word of it. */
export function mentions(tool: Tool, text: string): boolean {
  const lower = text.toLowerCase();
  const name = tool.name.toLowerCase();
  if (lower.includes(name) || lower.includes(name.replace(/[_-]+/g, ' '))) return true;
  const words = new Set(wordsOf(lower).map(stem));
  const nameParts = tool.name.split(/[_\-\s]+|(?<=[a-z])(?=[A-Z])/).map((w) => w.toLowerCase());
  const keys = [...nameParts.filter((w) => w.length >= 4), ...wordsOf((tool.description ?? '').toLowerCase()).filter((w) => w.length >= 5)];
  return keys.some((k) => !GENERIC.has(k) && words.has(stem(k)));
}

function wordsOf(text: string): string[] {
  return text.match(/[a-z0-9]+/g) ?? [];
}

/** Plural and simple verb forms match their base ("cities" still misses "city"; fine). */
function stem(word: string): string {
  return word.length > 4 && word.endsWith('s') ? word.slice(0, -1) : word;
}

/**
 * String values taken from the user's text, in the order they appear: quoted phrases, and runs
 * of capitalized words that do not start a sentence (likely names: "Paris", "New York").
 * Falls back to "example".
 */
export function userStrings(text: string, tools: Tool[]): StringSource {
  const found: Array<{ at: number; value: string }> = [];
  const quoted: Array<[number, number]> = [];
  for (const m of text.matchAll(/"([^"\n]{1,80})"|“([^”\n]{1,80})”|(?<![\p{L}\p{N}])'([^'\n]{2,80})'(?![\p{L}\p{N}])/gu)) {
    const value = (m[1] ?? m[2] ?? m[3] ?? '').trim();
    quoted.push([m.index, m.index + m[0].length]);
    if (value) found.push({ at: m.index, value });
  }
  const toolNames = new Set(tools.map((t) => t.name.toLowerCase()));
  for (const m of text.matchAll(/(^|[.!?]\s+|\s)([A-Z][\p{L}\p{N}-]*(?:\s+[A-Z][\p{L}\p{N}-]*)*)/gu)) {
    const at = m.index + (m[1] ?? '').length;
    const startsSentence = at === 0 || /[.!?]/.test(m[1] ?? '');
    const value = m[2] as string;
    if (startsSentence || value === 'I' || toolNames.has(value.toLowerCase())) continue;
    if (quoted.some(([from, to]) => at >= from && at < to)) continue;
    found.push({ at, value });
  }
  const candidates = [...new Set(found.sort((a, b) => a.at - b.at).map((f) => f.value))];
  let i = 0;
  return { next: () => (candidates.length === 0 ? 'example' : (candidates[i++ % candidates.length] as string)) };
}
