/**
 * Why generation ended. `unified` is what the gateway reasons about; `raw` is what the
 * provider said, kept for logs and for same-protocol passthrough.
 *
 * `refusal` covers every classifier refusal: Anthropic `stop_reason:"refusal"`, OpenAI
 * `finish_reason:"content_filter"`, a `refusal` message, Azure's content filter.
 */
export type FinishReason =
  | 'stop'
  | 'length'
  | 'tool-calls'
  | 'stop-sequence'
  | 'refusal'
  | 'pause'
  | 'error'
  | 'other';

export interface Finish {
  unified: FinishReason;
  raw?: string;
  /** The stop sequence that matched, when known. */
  stopSequence?: string;
  /** Anthropic `stop_details` (`{type, category, explanation}`) and the like. */
  details?: Record<string, unknown>;
}

/** A refusal's explanation (Anthropic's `stop_details.explanation`, OpenAI's refusal text), if it gave one. */
export function refusalExplanation(finish: Finish): string | undefined {
  const explanation = finish.details?.explanation;
  return finish.unified === 'refusal' && typeof explanation === 'string' ? explanation : undefined;
}
