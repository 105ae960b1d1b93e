/**
 * Token counting with a real BPE tokenizer (`o200k_base`, the GPT-4o / o-series encoding).
 *
 * Used for the hold (input estimate of every request) and by the local models, which stream
 * token by token and report exact usage. Special-token text such as `<|endoftext|>` in user
 * content is counted as ordinary text (the library would throw on it by default).
 */
import { countTokens as countO200k, decodeGenerator, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { decoder as sharedDecoder } from 'gpt-tokenizer/BytePairEncodingCore';
import type { Message, Request } from '../ir/index.js';

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
  const firstCut = longRunEnd(text, 0);
  if (firstCut < 0) return countO200k(text, PLAIN);
  let n = 0;
  for (const segment of boundedRuns(text, firstCut)) n += countO200k(segment, PLAIN);
  return n;
}

export function encodeText(text: string): number[] {
  if (text.length === 0) return [];
  const firstCut = longRunEnd(text, 0);
  if (firstCut < 0) return encode(text, PLAIN);
  return [...boundedRuns(text, firstCut)].flatMap((segment) => encode(segment, PLAIN));
}

/** Longest run of non-space characters the BPE sees whole. */
const MAX_RUN = 256;

/**
 * The library's BPE takes time quadratic in the length of one pre-token, and a run without spaces
 * is one pre-token: 64,000 repeated letters took 4.5 s here, 16,000 took 0.36 s. Text with such
 * runs (noise, base64, a padded string) is counted in segments cut after every MAX_RUN characters
 * of a run, which adds at most a token per cut and keeps counting linear (the same 64,000 letters:
 * 1 ms). Counting and encoding cut alike, so streamed pieces still add up to the count.
 * `firstCut` is where the caller's scan found the first run to end, so the text is scanned once.
 */
function* boundedRuns(text: string, firstCut: number): Generator<string> {
  let start = 0;
  for (let end = firstCut; end > 0; end = longRunEnd(text, end)) {
    yield text.slice(start, end);
    start = end;
  }
  if (start < text.length) yield text.slice(start);
}

/**
 * Where the first run of MAX_RUN characters without a space (code point 32 or below), looking
 * from `from`, ends; -1 when there is none. A linear scan: a regular expression such as
 * `\S{256}` retries from every position of a long run.
 */
function longRunEnd(text: string, from: number): number {
  let run = 0;
  for (let i = from; i < text.length; i++) {
    if (text.charCodeAt(i) <= 32) run = 0;
    else if (++run >= MAX_RUN) {
      const c = text.charCodeAt(i);
      // Never between the halves of a surrogate pair.
      return c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? i + 2 : i + 1;
    }
  }
  return -1;
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
 * What a request is made of for counting: strings to tokenize and fixed framing amounts. The
 * system prompt and every message (text, images at IMAGE_TOKENS, tool calls as name + arguments,
 * tool results, reasoning text or redacted data), each message framed by MESSAGE_OVERHEAD_TOKENS,
 * the tool definitions (name + description + schema JSON + TOOL_OVERHEAD_TOKENS each), a
 * structured-output schema (framed like a tool) and the reply priming. Each string is encoded
 * once; nothing is concatenated first.
 */
function* requestPieces(req: Request): Generator<string | number> {
  yield REPLY_PRIMING_TOKENS;
  if (req.system.length > 0) {
    yield MESSAGE_OVERHEAD_TOKENS;
    for (const part of req.system) yield part.text;
  }
  for (const message of req.messages) {
    yield MESSAGE_OVERHEAD_TOKENS;
    yield* messagePieces(message);
  }
  for (const tool of req.tools) {
    yield TOOL_OVERHEAD_TOKENS;
    yield tool.name;
    yield tool.description ?? '';
    yield JSON.stringify(tool.inputSchema);
  }
  if (req.responseFormat?.type === 'json_schema') {
    yield TOOL_OVERHEAD_TOKENS;
    yield JSON.stringify(req.responseFormat.schema);
  }
}

function* messagePieces(message: Message): Generator<string | number> {
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
        yield part.text;
        break;
      case 'image':
        yield IMAGE_TOKENS;
        break;
      case 'reasoning':
        yield part.text;
        if (part.redacted) yield part.redacted;
        break;
      case 'tool-call':
        yield TOOL_PART_OVERHEAD_TOKENS;
        yield part.name;
        yield part.arguments;
        break;
      case 'server-tool-call':
        yield TOOL_PART_OVERHEAD_TOKENS;
        yield part.name;
        yield part.arguments;
        break;
      case 'server-tool-result':
        yield TOOL_PART_OVERHEAD_TOKENS;
        yield JSON.stringify(part.content ?? null);
        break;
      case 'tool-result':
        yield TOOL_PART_OVERHEAD_TOKENS;
        for (const c of part.content) yield c.type === 'text' ? c.text : IMAGE_TOKENS;
        break;
      case 'fallback':
        // A gateway record, never sent upstream.
        break;
    }
  }
}

/** Input tokens of a request, as the hold and the local models see them (see requestPieces). */
export function countRequestTokens(req: Request): number {
  let total = 0;
  for (const piece of requestPieces(req)) total += typeof piece === 'number' ? piece : countTokens(piece);
  return total;
}

/** Text longer than this is counted in slices, yielding to the event loop between them. */
const SLICE_CHARS = 64 * 1024;

/**
 * The same count without blocking the event loop on large prompts: tokenizing costs about
 * 0.1-0.25 ms per KB, so a 32 MB body would stall every other stream for seconds. Long strings
 * are cut at word boundaries (a space after a non-space, before a letter), where o200k's
 * pre-tokenizer splits anyway, so the slices add up to the whole string's count. With `stopAbove`,
 * counting stops as soon as the total passes it (the answer is then only known to be larger).
 */
export async function countRequestTokensAsync(req: Request, stopAbove = Infinity): Promise<number> {
  let total = 0;
  let sinceYield = 0;
  for (const piece of requestPieces(req)) {
    if (typeof piece === 'number') {
      total += piece;
      continue;
    }
    for (const slice of slices(piece)) {
      total += countTokens(slice);
      if (total > stopAbove) return total;
      sinceYield += slice.length;
      if (sinceYield >= SLICE_CHARS) {
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }
  return total;
}

function* slices(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > SLICE_CHARS) {
    let cut = start + SLICE_CHARS;
    const limit = Math.min(text.length - 1, cut + 4096);
    while (cut < limit && !(text[cut] === ' ' && /\S/.test(text[cut - 1]) && /\p{L}/u.test(text[cut + 1]))) cut++;
    if (cut >= limit) {
      // No word boundary nearby (noise): a plain cut, never between the halves of a surrogate pair.
      cut = start + SLICE_CHARS;
      if (/[\uDC00-\uDFFF]/.test(text[cut])) cut++;
    }
    yield text.slice(start, cut);
    start = cut;
  }
  yield text.slice(start);
}
