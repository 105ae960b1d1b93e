/**
 * Extension bags: what a client protocol's decoder keeps of its wire that the IR has no home for,
 * one bag per protocol on the request and on each message, part and tool, each with a declared
 * type. Only the protocol's decoder writes its bag, and only an encoder of the same protocol reads
 * it: its client encoder, and a provider that speaks it natively (same-protocol passthrough).
 * `make lint` refuses a bag key anywhere else (tools/check-bags.mjs). What another layer needs to
 * know about a request is IR proper (`Request.nativeOnly`, `Request.dropped`, `TextPart.hoisted`, ...).
 */

/** The extension bag keys, one per client protocol: the only definition of each. */
export const CHAT_EXT = 'openai-chat';
export const MESSAGES_EXT = 'anthropic';
export const RESPONSES_EXT = 'openai-responses';

/**
 * A wire object's fields with no IR home, exactly as the client sent them: an encoder of the same
 * protocol writes them back underneath the fields it owns.
 */
export type WireFields = Record<string, unknown>;

/**
 * One bag per client protocol, each of its place's type; a protocol whose decoder keeps nothing
 * there has `never` (its key cannot be written).
 */
export interface Ext<Chat = never, Messages = never, Responses = never> {
  [CHAT_EXT]?: Chat;
  [MESSAGES_EXT]?: Messages;
  [RESPONSES_EXT]?: Responses;
}

/** A client protocol, as its bag key (a provider's `nativeProtocol`, a `NativeOnly.protocol`). */
export type ExtKey = keyof Ext;

// --- Chat Completions (CHAT_EXT) -------------------------------------------------------------

/** A Chat request's bag. */
export interface ChatRequestBag {
  /** The body's fields with no IR home (`seed`, `user`, `logprobs`, `service_tier`, ...). */
  fields: ChatBodyFields;
}

export interface ChatBodyFields extends WireFields {
  /** A raw effort the IR rounds (`minimal`, `xhigh`): an OpenAI upstream gets it as sent. */
  reasoning_effort?: string;
  /** `stream_options` without `include_usage` (which the IR carries). */
  stream_options?: WireFields;
}

/** A text part's other fields; a system part from a `developer` message is marked with its role. */
export interface ChatTextBag extends WireFields {
  role?: 'developer';
}

// --- Messages (MESSAGES_EXT; Claude's cloud formats decode to it too) ------------------------

/** A Messages request's bag. */
export interface MessagesRequestBag {
  /**
   * The body's fields with no IR home (`metadata`, `top_k`, `container`, `context_management`,
   * `output_config` (whose `format` the IR carries as well), ...).
   */
  fields?: MessagesBodyFields;
  /** Server tools (`web_search_20250305`, ...), as sent: only an upstream that runs them gets them. */
  serverTools?: WireFields[];
}

export interface MessagesBodyFields extends WireFields {
  output_config?: WireFields | null;
}

/** A text block's other fields (`cache_control`, ...), or the plain-text `document` block it was. */
export interface MessagesTextBag extends WireFields {
  document?: WireFields;
}

// --- Responses (RESPONSES_EXT) ---------------------------------------------------------------

/** A Responses request's bag: its other fields, and what the decoder keeps for a Responses upstream and the response's echo. */
export interface ResponsesRequestBag {
  /** The body's fields with no IR home (`text`, `store`, `metadata`, `include`, `prompt_cache_key`, ...). */
  fields?: ResponsesBodyFields;
  /** Hosted tools (`web_search`, `mcp`, `namespace`, ...), as sent. */
  hostedTools?: WireFields[];
  /** Input items the IR has no form for, with the index of the IR message they came before. */
  otherItems?: Array<{ position: number; item: WireFields }>;
  /** The effort as the client wrote it (`minimal`, `none`, ...). */
  reasoningEffort?: string;
  /** `tool_choice` when it is an object the IR does not hold whole (`allowed_tools`, a hosted tool). */
  toolChoice?: WireFields;
  /** `previous_response_id`, for the response's echo (the handler resolved it). */
  previousResponseId?: string;
}

export interface ResponsesBodyFields extends WireFields {
  text?: unknown;
  store?: unknown;
  metadata?: unknown;
  user?: unknown;
}

/** A `function_call` or `function_call_output` item's own fields. */
export interface ResponsesItemBag {
  id?: unknown;
  status?: unknown;
  /** The namespace tool a call's function is in. */
  namespace?: string;
}

/** A `reasoning` item's fields with no IR home. */
export interface ResponsesReasoningBag {
  id?: string;
  /** The summary's parts, when more than one (the IR joins them). */
  summaryParts?: string[];
  /** Raw reasoning `content`. */
  content?: unknown;
}

/** A function tool's other fields. */
export interface ResponsesToolBag extends WireFields {
  strict?: unknown;
}

// --- The bags of each place ------------------------------------------------------------------

export type RequestExt = Ext<ChatRequestBag, MessagesRequestBag, ResponsesRequestBag>;
export type MessageExt = Ext<WireFields, WireFields>;
export type TextExt = Ext<ChatTextBag, MessagesTextBag>;
export type ImageExt = Ext<WireFields, WireFields>;
export type ReasoningExt = Ext<never, never, ResponsesReasoningBag>;
export type ToolCallExt = Ext<never, WireFields, ResponsesItemBag>;
export type ToolResultExt = Ext<never, WireFields, ResponsesItemBag>;
/** A server tool's call or result (Messages only). */
export type ServerToolExt = Ext<never, WireFields>;
export type ToolExt = Ext<WireFields, WireFields, ResponsesToolBag>;
