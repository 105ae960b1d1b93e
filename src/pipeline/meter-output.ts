import type { Finish, StreamEvent, Usage } from '../ir/index.js';
import { countTokens, decodeTokens, encodeText } from '../util/tokenizer.js';

/** What the gateway itself measured of one attempt's output. */
export class OutputMeter {
  /**
   * Output counted so far: UTF-8 bytes (an upper bound of the tokens) until the bytes could reach
   * the ceiling, then tokens (exact at the ceiling, a close upper estimate below it).
   */
  private counted = 0;
  private tokenizing = false;
  /** True once output reached the client side of the pipeline (a non-empty delta, a tool call, a redacted block). */
  emittedOutput = false;
  finish?: Finish;
  usage?: Usage;
  private blockText = new Map<string, string>();
  private blockKind = new Map<string, 'text' | 'reasoning' | 'tool'>();
  private open = new Map<string, 'text' | 'reasoning' | 'tool'>();

  constructor(readonly maxTokens: number) {}

  /** Open blocks, in opening order, so a cut can close them. */
  openBlocks(): Array<[string, 'text' | 'reasoning' | 'tool']> {
    return [...this.open.entries()];
  }

  track(ev: StreamEvent): void {
    switch (ev.type) {
      case 'text-start':
        this.openBlock(ev.id, 'text');
        break;
      case 'reasoning-start':
        this.openBlock(ev.id, 'reasoning');
        if (ev.redacted !== undefined) this.emittedOutput = true;
        break;
      case 'tool-start':
        this.openBlock(ev.id, 'tool');
        this.emittedOutput = true;
        break;
      case 'text-end':
      case 'reasoning-end':
      case 'tool-end':
        this.open.delete(ev.id);
        break;
      default:
    }
  }

  private openBlock(id: string, kind: 'text' | 'reasoning' | 'tool'): void {
    this.open.set(id, kind);
    this.blockKind.set(id, kind);
    this.blockText.set(id, '');
  }

  /** Drops a block that was never shown (its start was held back and nothing followed). */
  forget(id: string): void {
    this.open.delete(id);
  }

  /**
   * Admits a delta under the ceiling. Returns the part of `piece` that fits (all of it, a prefix,
   * or '') and whether the ceiling is now reached. Counting is per piece (cheap); only when that
   * estimate crosses the ceiling are the blocks recounted exactly, so a well-behaved upstream is
   * never cut early by the estimate.
   */
  admit(id: string, piece: string): { text: string; reached: boolean } {
    if (!this.tokenizing) {
      // Every token is at least one UTF-8 byte, so while the bytes fit, the tokens fit too: most
      // answers end below their ceiling without being tokenized at all. The first piece that
      // could cross switches to counting tokens, from an exact count of what came before.
      const bytes = Buffer.byteLength(piece, 'utf8');
      if (this.counted + bytes <= this.maxTokens) return this.accept(id, piece, bytes, false);
      this.tokenizing = true;
      this.counted = this.exactCount();
    }
    const n = countTokens(piece);
    if (this.counted + n <= this.maxTokens) return this.accept(id, piece, n);
    const exactBefore = this.exactCount();
    const exactWith = countTokens((this.blockText.get(id) ?? '') + piece) - countTokens(this.blockText.get(id) ?? '');
    if (exactBefore + exactWith <= this.maxTokens) {
      this.counted = exactBefore;
      return this.accept(id, piece, exactWith);
    }
    const room = Math.max(0, this.maxTokens - exactBefore);
    const prefix = room > 0 ? decodeTokens(encodeText(piece).slice(0, room)) : '';
    this.counted = exactBefore;
    const accepted = this.accept(id, prefix, room);
    return { text: accepted.text, reached: true };
  }

  private accept(id: string, piece: string, n: number, exact = true): { text: string; reached: boolean } {
    this.counted += n;
    if (piece) this.emittedOutput = true;
    this.blockText.set(id, (this.blockText.get(id) ?? '') + piece);
    if (!exact || this.counted < this.maxTokens) return { text: piece, reached: false };
    // Per-piece counts overestimate (a piece alone can take more tokens than inside its text):
    // the ceiling counts as reached only when the exact count says so.
    this.counted = this.exactCount();
    return { text: piece, reached: this.counted >= this.maxTokens };
  }

  private exactCount(): number {
    return this.exactOutput().total;
  }

  /** The tokenizer's count over everything admitted so far, block by block. */
  exactOutput(): { total: number; reasoning: number } {
    let total = 0;
    let reasoning = 0;
    for (const [id, text] of this.blockText) {
      const n = countTokens(text);
      total += n;
      if (this.blockKind.get(id) === 'reasoning') reasoning += n;
    }
    return { total, reasoning };
  }
}

/**
 * The usage billed for an attempt: the upstream's numbers where it reported them, output in full
 * even above the ceiling (it is what the provider bills the operator: the hold covers the ceiling,
 * and a cost beyond the hold is captured as a recorded debt); else what the gateway counted of
 * the output it let through, which the ceiling bounds.
 */
export function billableUsage(meter: OutputMeter, inputTokens: number): Usage {
  const up = meter.usage;
  const upstreamInput = up ? up.input.noCache + up.input.cacheRead + up.input.cacheWrite : 0;
  const input = upstreamInput > 0 ? up!.input : { noCache: inputTokens, cacheRead: 0, cacheWrite: 0 };
  const output = up && up.output.total > 0 ? reportedOutput(up.output) : ownOutput(meter);
  // Server-tool uses and the serving tier are the upstream's word alone; the tokenizer knows neither.
  return { input: { ...input }, output, ...(up?.serverTools ? { serverTools: { ...up.serverTools } } : {}), ...(up?.serviceTier ? { serviceTier: up.serviceTier } : {}) };
}

/** The upstream's output as reported; its reasoning is part of the total, never more. */
function reportedOutput(reported: Usage['output']): Usage['output'] {
  return { ...reported, reasoning: Math.min(reported.reasoning, reported.total) };
}

/** The tokenizer's count of what was admitted, at most the ceiling (a cut piece may count a token more inside its text). */
function ownOutput(meter: OutputMeter): Usage['output'] {
  const counted = meter.exactOutput();
  const total = Math.min(counted.total, meter.maxTokens);
  return { total, reasoning: Math.min(counted.reasoning, total) };
}
