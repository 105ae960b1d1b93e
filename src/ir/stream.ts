import type { GatewayError } from './errors.js';
import type { Citation, ReasoningOrigin } from './content.js';
import type { Finish } from './finish.js';
import type { Attempt } from './response.js';
import type { Usage } from './usage.js';

/**
 * The canonical stream: a block lifecycle. Every block opens with `*-start`, carries deltas and
 * closes with `*-end`; blocks are linked by `id` (unique within one stream, assigned by the
 * producer). Blocks do not interleave except tool blocks, which may (parallel tool calls).
 *
 * A well-formed stream is:
 *   start, (block events)*, [fallback, warning*, (block events)*]*, finish
 * or ends early with `error` after any prefix.
 */
export type StreamEvent =
  /** The upstream accepted the request. `usage` carries the input side when it is known up front. */
  | { type: 'start'; id: string; model: string; usage?: Usage }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; text: string }
  | { type: 'text-end'; id: string }
  /**
   * `redacted` set means an opaque redacted block (no deltas follow). `origin` says which provider
   * produced it, so encoders pass signatures and encrypted reasoning back only where they belong.
   */
  | { type: 'reasoning-start'; id: string; redacted?: string; origin?: ReasoningOrigin }
  | { type: 'reasoning-delta'; id: string; text: string }
  /** The signature of a reasoning block, passed on byte for byte. */
  | { type: 'reasoning-signature'; id: string; signature: string }
  | { type: 'reasoning-end'; id: string }
  /** `server`: a tool the upstream runs itself (Anthropic server tools), never a client tool call. */
  | { type: 'tool-start'; id: string; toolCallId: string; name: string; server?: boolean }
  /** A fragment of the arguments' JSON text. */
  | { type: 'tool-delta'; id: string; json: string }
  | { type: 'tool-end'; id: string }
  /**
   * The upstream's result of one of its server tools: a whole block in one event (no deltas).
   * `kind` is its block type (`web_search_tool_result`, ...), `content` as the upstream sent it.
   */
  | { type: 'server-tool-result'; id: string; toolCallId: string; kind: string; content: unknown }
  /** A citation backing the open text block `id`, sent before its `text-end`. */
  | { type: 'citation'; id: string; citation: Citation }
  /**
   * The gateway switched to another model (emitted by the pipeline only): `outcome` is how the
   * attempt on `from` ended (a refusal, or an error such as an outage), `variant` which variant of
   * `to` serves next.
   */
  | {
      type: 'fallback';
      from: string;
      to: string;
      reason: string;
      outcome: 'refusal' | 'error';
      variant?: 'standard' | 'fast';
      /** For a person: who stopped and why (a refusal's explanation), and who answers now. */
      message?: string;
    }
  /**
   * What of the request did not reach the upstream. A provider may yield it (any time, best
   * before its output); the pipeline reports it in `x-switchyard-warnings` while the headers
   * have not gone out, else as this event in the stream (a later candidate's dropped feature, say).
   */
  | { type: 'warning'; message: string }
  /**
   * The run's end, answered or failed. `attempts`: every attempt as the pipeline recorded it, hops
   * between a model's deployments included (which no `fallback` event marks): the same list as
   * `x-switchyard-attempts` and the usage record. Encoders report it as it is; none builds one.
   */
  /** `cost`: what the request is billed, in nanodollars (every attempt's, rounded up once). */
  | { type: 'finish'; finish: Finish; usage: Usage; cost?: bigint; attempts: Attempt[] }
  | { type: 'error'; error: GatewayError; attempts: Attempt[] };

export type StreamEventType = StreamEvent['type'];

/**
 * An upstream's answer as a provider decodes it: the stream's content, ended by the upstream's own
 * finish (its usage; no attempts: one call knows nothing of the run). The pipeline turns these
 * into the client's StreamEvents, whose end it writes itself.
 */
export type UpstreamEvent = Exclude<StreamEvent, { type: 'finish' | 'error' }> | { type: 'finish'; finish: Finish; usage: Usage };
