import type { Actor, KeyAuth } from '../ledger/index.js';
import type { RunSummary } from '../pipeline/types.js';
import type { SseFrame, HeaderBag, ProtocolAdapter } from '../protocols/types.js';
import type { RequestTrace } from '../telemetry/types.js';

/** Everything a handler gets from the HTTP layer: plain data, no framework objects. */
export interface HandlerInput {
  body: any;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  headers: HeaderBag;
  requestId: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** The authenticated caller (client API routes). */
  auth?: KeyAuth;
  /** Who is making an admin change (admin routes): the audit log's actor. */
  actor?: Actor;
  /** The protocol whose shapes this route speaks (errors are rendered with it). */
  protocol: ProtocolAdapter<any>;
  /** Filled by a completion for the request's log line (see http/request-log.ts). */
  completion?: CompletionReport;
  /** The request's trace, when telemetry is on. */
  trace?: RequestTrace;
}

/** What the request log tells of a completion: the model asked for and the run as it went. */
export interface CompletionReport {
  model?: string;
  stream?: boolean;
  run?: RunSummary;
}

export type HandlerResult =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | {
      kind: 'sse';
      frames: AsyncGenerator<SseFrame>;
      headers?: Record<string, string>;
      /**
       * Ends what the frames come from. The HTTP layer calls it once the response is over, even
       * when it never started on the frames (a generator not yet started skips its own finally).
       */
      close: () => Promise<void>;
    }
  | { kind: 'empty'; status: number; headers?: Record<string, string> }
  | { kind: 'text'; status: number; body: string; contentType: string; headers?: Record<string, string> };

export type Handler = (input: HandlerInput) => Promise<HandlerResult>;
