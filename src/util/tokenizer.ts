/**
 * Token counting with a real BPE tokenizer (`o200k_base`, the GPT-4o / o-series encoding).
 *
 * Used for the hold (input estimate of every request) and by the local models, which stream
 * token by token and report exact usage. Special-token text such as `<|endoftext|>` in user
 * content is counted as ordinary text (the library would throw on it by default).
 */
import { countTokens as countO200k, decodeGenerator, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { decoder as sharedDecoder } from 'gpt-tokenizer/BytePairEncodingCore';
import type { Message, Request, Tool } from '../ir/index.js';

/** Treat special-token text as plain text. */
const PLAIN = { disallowedSpecial: new Set<string>() };

/** Per-message framing, after OpenAI's chat accounting (`<|start|>role ... <|end|>`). */
export const MESSAGE_OVERHEAD_TOKENS = 3;
/** Every reply is primed with `<|start|>assistant<|message|>`. */
export const REPLY_PRIMING_TOKENS = 3;
/**
 * Images are not decoded, so each counts a fixed amount: OpenAI's high-detail cost of a
 * 1024x1024 image (85 base + 4 tiles x 170). Anthropic's (w*h)/750 gives ~1400 for that size
 * but ~500 for a typical screenshot thumbnail; 765 sits between and keeps the hold cheap to compute.
 */
export const IMAGE_TOKENS = 765;
/** Framing of one tool definition (its wrapper object in the prompt). */
export const TOOL_OVERHEAD_TOKENS = 8;
/** Framing of one tool call or tool result inside a message. */
export const TOOL_PART_OVERHEAD_TOKENS = 3;

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return countO200k(text, PLAIN);
}

export function encodeText(text: string): number[] {
  if (text.length === 0) return [];
  return encode(text, PLAIN);
}

/**
 * Decodes token ids to text. Ids that end inside a UTF-8 character give U+FFFD for the missing
 * bytes. The library keeps one streaming TextDecoder for all calls, so a partial character would
 * leak into the next decode; flushing it here keeps every call independent.
 */
export function decodeTokens(ids: readonly number[]): string {
  flushSharedDecoder();
  let out = '';
  for (const piece of decodeGenerator(ids)) out += piece;
  return out + flushSharedDecoder();
}

/** One streamable piece: the text of one token, or of a few when a character spans tokens. */
export interface TokenPiece {
  text: string;
  tokens: number;
}

/**
 * Splits text into pieces that each decode to whole characters. The pieces concatenate to the
 * text and their token counts add up to `countTokens(text)`, so a stream built from them
 * reports exact usage.
 */
export function tokenPieces(text: string): TokenPiece[] {
  const ids = encodeText(text);
  const pieces: TokenPiece[] = [];
  let pulled = 0;
  let accounted = 0;
  // decodeGenerator pulls ids lazily and yields once a character is complete, so the number of
  // ids pulled when a piece appears tells how many tokens that piece spans.
  function* counting(): Generator<number> {
    for (const id of ids) {
      pulled++;
      yield id;
    }
  }
  flushSharedDecoder();
  for (const piece of decodeGenerator(counting())) {
    pieces.push({ text: piece, tokens: pulled - accounted });
    accounted = pulled;
  }
  const rest = flushSharedDecoder();
  if (pulled > accounted || rest) pieces.push({ text: rest, tokens: pulled - accounted });
  return pieces;
}

function flushSharedDecoder(): string {
  return sharedDecoder.decode();
}

/**
 * Input tokens of a request, as the hold and the local models see them: the system prompt and
 * every message (text, images at IMAGE_TOKENS, tool calls as name + arguments, tool results,
 * reasoning text or redacted data), each message framed by MESSAGE_OVERHEAD_TOKENS, the tool
 * definitions (name + description + schema JSON + TOOL_OVERHEAD_TOKENS each) and the reply
 * priming. Each string is encoded once; nothing is concatenated first.
 */
export function countRequestTokens(req: Request): number {
  let total = REPLY_PRIMING_TOKENS;
  if (req.system.length > 0) {
    total += MESSAGE_OVERHEAD_TOKENS;
    for (const part of req.system) total += countTokens(part.text);
  }
  for (const message of req.messages) total += MESSAGE_OVERHEAD_TOKENS + countMessage(message);
  for (const tool of req.tools) total += countTool(tool);
  return total;
}

function countMessage(message: Message): number {
  let n = 0;
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
        n += countTokens(part.text);
        break;
      case 'image':
        n += IMAGE_TOKENS;
        break;
      case 'reasoning':
        n += countTokens(part.text) + (part.redacted ? countTokens(part.redacted) : 0);
        break;
      case 'tool-call':
        n += TOOL_PART_OVERHEAD_TOKENS + countTokens(part.name) + countTokens(part.arguments);
        break;
      case 'tool-result':
        n += TOOL_PART_OVERHEAD_TOKENS;
        for (const c of part.content) n += c.type === 'text' ? countTokens(c.text) : IMAGE_TOKENS;
        break;
      case 'fallback':
        // A gateway record, never sent upstream.
        break;
    }
  }
  return n;
}

function countTool(tool: Tool): number {
  return (
    TOOL_OVERHEAD_TOKENS +
    countTokens(tool.name) +
    countTokens(tool.description ?? '') +
    countTokens(JSON.stringify(tool.inputSchema))
  );
}
