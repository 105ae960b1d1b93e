import type { AssistantPart } from './content.js';
import type { Finish } from './finish.js';
import type { Usage } from './usage.js';

/** One hop of a fallback chain, as reported to the client. */
export interface Attempt {
  model: string;
  /** The deployment that served the attempt (`<model>/<name>`), when the model has several. */
  deployment?: string;
  outcome: 'ok' | 'refusal' | 'error';
  reason?: string;
}

/** A whole (non-streamed) answer. */
export interface Response {
  id: string;
  /** The catalog id of the model that produced the final answer. */
  model: string;
  content: AssistantPart[];
  finish: Finish;
  usage: Usage;
  /** What the request is billed, in nanodollars (absent when it was not priced). */
  cost?: bigint;
  /** Every attempt, in order; length 1 without fallback. */
  attempts: Attempt[];
  /** Which variant served (`fast` when the fast variant did). */
  servedVariant?: 'standard' | 'fast';
  created: number;
}
