/**
 * Reads what the local model reacts to from a request: the system prompt, the last user turn,
 * the tool results that ended the conversation, and a digest that seeds the filler text.
 */
import type { Message, Request, ToolResultPart } from '../../ir/index.js';
import { hash32 } from './make-seed.js';

export const REFUSAL_TRIGGER =
  'ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL_1FAEFB6177B4672DEE07F9D3AFC62588CCD2631EDCF22E8CCC1FB35B501C9C86';

export interface ToolOutcome {
  /** The tool's name, from the assistant call it answers ('unknown' when the call is missing). */
  name: string;
  text: string;
  isError: boolean;
}

export interface Conversation {
  systemText: string;
  lastRole?: Message['role'];
  /** Text of the last user message (its text parts joined by newlines). */
  lastUserText: string;
  lastUserImages: number;
  /** Results in the last message when it is a tool message, in order. */
  toolOutcomes: ToolOutcome[];
  /** The request offers tools. */
  hasTools: boolean;
  /** Turns came before the last one. */
  hasEarlierTurns: boolean;
  /** The client reads the answer as a stream. */
  streamed: boolean;
  /** Some user text carries the refusal trigger. */
  refusalTriggered: boolean;
  /** Seed for the deterministic filler: a hash of the whole conversation. */
  seed: number;
}

/** `clientStreams`: whether the client reads a stream (`req.stream` when absent). */
export function readConversation(req: Request, clientStreams = req.stream): Conversation {
  const systemText = req.system.map((p) => p.text).join('\n');
  const last = req.messages.at(-1);
  const lastUser = [...req.messages].reverse().find((m) => m.role === 'user');
  let lastUserText = '';
  let lastUserImages = 0;
  if (lastUser?.role === 'user') {
    lastUserText = lastUser.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
    lastUserImages = lastUser.content.filter((p) => p.type === 'image').length;
  }
  return {
    systemText,
    lastRole: last?.role,
    lastUserText,
    lastUserImages,
    toolOutcomes: last?.role === 'tool' ? last.content.map((r) => outcome(req.messages, r)) : [],
    hasTools: req.tools.length > 0,
    hasEarlierTurns: req.messages.length > 1,
    streamed: clientStreams,
    refusalTriggered: req.messages.some(
      (m) => m.role === 'user' && m.content.some((p) => p.type === 'text' && p.text.includes(REFUSAL_TRIGGER)),
    ),
    seed: hash32(digest(req)),
  };
}

function outcome(messages: Message[], result: ToolResultPart): ToolOutcome {
  let name = 'unknown';
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const p of m.content) if (p.type === 'tool-call' && p.id === result.toolCallId) name = p.name;
  }
  const text = result.content
    .map((c) => (c.type === 'text' ? c.text : '[image]'))
    .join(' ')
    .trim();
  return { name, text, isError: result.isError === true };
}

/** The conversation's content (not its ids or knobs), so equal conversations seed equally. */
function digest(req: Request): string {
  const parts: string[] = [req.system.map((p) => p.text).join('\n')];
  for (const m of req.messages) {
    parts.push(m.role);
    for (const p of m.content) {
      if (p.type === 'text' || p.type === 'reasoning') parts.push(p.text);
      else if (p.type === 'tool-call') parts.push(p.name, p.arguments);
      else if (p.type === 'tool-result') parts.push(p.content.map((c) => (c.type === 'text' ? c.text : '')).join(''));
    }
  }
  return parts.join('\u0000');
}
