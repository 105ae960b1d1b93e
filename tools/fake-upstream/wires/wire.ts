import type { IncomingHttpHeaders } from 'node:http';
import type { AwsCredentials } from '../bedrock.js';
import type { FakeOAuth } from '../oauth.js';

/**
 * The framings the fake's scripts, transcripts and generated answers come in: the folder a
 * script lives in under `scripts/` (transcripts.ts), and what generate.ts and agent.ts write and read.
 */
export type WireProtocol = 'openai-chat' | 'anthropic-messages' | 'openai-responses' | 'google-gemini' | 'bedrock';

/**
 * One wire protocol the fake upstream speaks (one module each under `wires/`, listed in
 * `../wires.ts`): which paths it answers, how it authenticates, and the shape of its errors and
 * streams. server.ts is generic over these.
 */
export interface FakeWire {
  /** Where its scripts live and how replays are framed (`scripts/<protocol>/`, transcripts.ts). */
  protocol: WireProtocol;
  /** The protocol its generated answers are written in (generate.ts), before the call reshapes them. */
  generatedAs: WireProtocol;
  /** The call a request path makes in this protocol, or undefined when the path is not this protocol's. */
  match(pathname: string): WireCall | undefined;
  /** What the provider answers a request whose credentials it refuses (undefined: admitted). */
  authenticate?(req: WireRequest, ctx: WireContext): Promise<WireRefusal | undefined> | WireRefusal | undefined;
  /** The protocol-shaped error body for a status (`message` or a default of the fake's). */
  errorBody(status: number, message?: string): unknown;
  /** Headers an error answer carries besides its body. */
  errorHeaders(status: number): Record<string, string>;
  /** The provider's refusal of an output ceiling above the model's maximum, in its words. */
  ceilingRefusal(asked: number, max: number, model: string): string;
  /** A broken stream event, in the protocol's framing (the `malformed` fault). */
  malformedEvent(): string | Uint8Array;
  /** The content type of a streamed answer. */
  contentType: string;
}

export interface WireCall {
  /** The body as the rest of the fake reads bodies: `model`, `stream` and `max_tokens` at the top. */
  view(body: Record<string, unknown>): Record<string, unknown>;
  /** A generated whole answer (in `generatedAs`) in this call's shape; as is when absent. */
  json?(answer: Record<string, unknown>): unknown;
  /** Generated stream events (in `generatedAs`) in this call's framing; as is when absent. */
  events?(events: string[]): Array<string | Uint8Array>;
}

export interface WireRequest {
  method: string;
  url: string;
  pathname: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface WireContext {
  /** The token endpoint's state: which bearer tokens Vertex routes admit. */
  oauth: FakeOAuth;
  /** Bedrock SigV4 credentials the signature is checked against (startFakeUpstream's option). */
  awsCredentials?: AwsCredentials;
}

export interface WireRefusal {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The body as is: protocols that carry `model` and `stream` in it. */
export const sameBody = (body: Record<string, unknown>): Record<string, unknown> => body;

/** OpenAI's words for a ceiling above the model's maximum (the default of most providers' fakes). */
export function openaiCeilingRefusal(asked: number, max: number): string {
  return `max_tokens is too large: ${asked}. This model supports at most ${max} completion tokens, whereas you provided ${asked}.`;
}
