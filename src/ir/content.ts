/**
 * Content parts: the pieces a conversation turn is made of, independent of any wire protocol.
 *
 * Every part may carry `ext`, its protocol's bag of fields the IR has no home for (bags.ts). A
 * decoder puts the unknown fields of a block there (e.g. Anthropic `cache_control`, a tool_use
 * `caller`), and an encoder of the same protocol writes them back, so same-protocol passthrough
 * loses nothing.
 */

import type { Ext, ImageExt, MessageExt, ReasoningExt, ServerToolExt, TextExt, ToolCallExt, ToolResultExt } from './bags.js';

export interface TextPart {
  type: 'text';
  text: string;
  /** An assistant's refusal given back in a later turn (Chat `refusal`, a Responses `refusal` part). */
  refusal?: boolean;
  /**
   * A system part that was a system or developer message inside the conversation, moved to the
   * system prompt (the IR has one); unset for a top-level instruction (`instructions`, `system`).
   */
  hoisted?: boolean;
  /** What backs the text (Anthropic citations: document, search-result and web-search locations), as the upstream sent them. */
  citations?: Citation[];
  ext?: TextExt;
}

/** One citation, as the upstream sent it; `type` names its kind (`web_search_result_location`, `char_location`, ...). */
export type Citation = { type: string } & Record<string, unknown>;

export type ImageSource =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'url'; url: string };

export interface ImagePart {
  type: 'image';
  source: ImageSource;
  /** OpenAI's `detail` (chat `image_url.detail`, Responses `input_image.detail`). */
  detail?: string;
  ext?: ImageExt;
}

/**
 * Where a reasoning part came from. Signatures and encrypted reasoning are bound to the
 * provider (and often the model) that produced them: encoders forward them only to the same
 * provider kind and never invent one.
 */
export interface ReasoningOrigin {
  /**
   * The signature family: the producing provider's `capabilities.signatures.family` (a client's
   * signed thinking block: THINKING_FAMILY; a client's encrypted_content: RESPONSES_FAMILY).
   * Provider encoders send a signature back only to their own family.
   */
  provider: string;
  model?: string;
  /**
   * The signature is opaque to clients that carry signed thinking blocks (Chat, Messages): they get
   * it sealed in an envelope naming the family, so it can never come back as an Anthropic
   * signature. Set from the family's `capabilities.signatures.opaque` (Responses encrypted_content,
   * Gemini thought signatures).
   */
  opaque?: boolean;
}

/** The family of a signed thinking block as Messages and Chat clients carry it and send it back. */
export const THINKING_FAMILY = 'anthropic';
/** The family of Responses `encrypted_content` (a Responses upstream's, or a Responses client's). */
export const RESPONSES_FAMILY = 'openai-responses';

export interface ReasoningPart {
  type: 'reasoning';
  /** Plain reasoning text (empty for redacted reasoning). */
  text: string;
  /** Anthropic thinking signature, byte for byte. */
  signature?: string;
  /** Opaque redacted/encrypted reasoning (Anthropic redacted_thinking.data, Responses encrypted_content). */
  redacted?: string;
  origin?: ReasoningOrigin;
  ext?: ReasoningExt;
}

export interface ToolCallPart {
  type: 'tool-call';
  id: string;
  name: string;
  /** The arguments as JSON text, exactly as produced. `{}` for a tool without input. */
  arguments: string;
  ext?: ToolCallExt;
}

export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  content: Array<TextPart | ImagePart>;
  isError?: boolean;
  ext?: ToolResultExt;
}

/**
 * A call of a tool the upstream runs itself (Anthropic server tools: web search, web fetch, code
 * execution, ...). Never a client tool call: the client does not answer it, the upstream does
 * (a ServerToolResultPart follows).
 */
export interface ServerToolCallPart {
  type: 'server-tool-call';
  id: string;
  name: string;
  /** The input as JSON text, exactly as produced. */
  arguments: string;
  ext?: ServerToolExt;
}

/**
 * The upstream's result of its own tool call, whole: `kind` is its block type
 * (`web_search_tool_result`, `code_execution_tool_result`, ...) and `content` its content as sent.
 */
export interface ServerToolResultPart {
  type: 'server-tool-result';
  toolCallId: string;
  kind: string;
  content: unknown;
  ext?: ServerToolExt;
}

export type UserPart = TextPart | ImagePart;
export type AssistantPart = TextPart | ReasoningPart | ToolCallPart | ServerToolCallPart | ServerToolResultPart | FallbackPart;

/**
 * A record that the gateway handed a request from one model to another after a refusal.
 * Rendered as a `fallback` content block on the messages protocol; never sent upstream.
 */
export interface FallbackPart {
  type: 'fallback';
  from: string;
  to: string;
  reason: string;
}

export type Message =
  | { role: 'user'; content: UserPart[]; ext?: MessageExt }
  | { role: 'assistant'; content: AssistantPart[]; ext?: MessageExt }
  /** Results of tool calls. Anthropic carries these inside a user turn; decoders split them out. */
  | { role: 'tool'; content: ToolResultPart[]; ext?: Ext };
