import type { ExtKey, RequestExt, ToolExt } from './bags.js';
import type { Message, TextPart } from './content.js';

/** The client protocols the gateway speaks (Bedrock's and Vertex's are Claude's cloud formats of messages). */
export type ClientProtocol = 'openai-chat' | 'anthropic-messages' | 'openai-responses' | 'bedrock-invoke' | 'vertex-raw-predict';

export interface Tool {
  name: string;
  description?: string;
  /** JSON schema of the input object. */
  inputSchema: Record<string, unknown>;
  /**
   * A function OpenAI Responses groups under a `namespace` tool: `name` is then
   * `namespacedToolName(group.namespace, group.name)`, a plain function name every upstream takes,
   * and `group` gives a Responses client (or upstream) its two names back.
   */
  group?: ToolGroup;
  ext?: ToolExt;
}

/** Where a namespaced function sits: its namespace and its own name there. */
export interface ToolGroup {
  namespace: string;
  name: string;
}

/** A namespaced function's one name in the IR (and for upstreams that have no namespaces): `<namespace>__<name>`. */
export function namespacedToolName(namespace: string, name: string): string {
  return `${namespace}__${name}`;
}

/** The namespace and own name of the tool an IR name calls, when it is a namespaced function. */
export function toolGroupOf(tools: readonly Tool[], name: string): ToolGroup | undefined {
  return tools.find((t) => t.name === name)?.group;
}

/**
 * `allowed` (OpenAI's `allowed_tools`) limits which of the defined tools may be called, while all
 * stay defined (the prompt, and its cache, stay the same).
 */
export type ToolChoice =
  | { type: 'auto'; allowed?: string[] }
  | { type: 'none' }
  | { type: 'required'; allowed?: string[] }
  | { type: 'tool'; name: string };

/** The tools a choice allows, when it limits them (`allowed_tools`); undefined: no limit. */
export function allowedTools(choice: ToolChoice | undefined): string[] | undefined {
  return choice?.type === 'auto' || choice?.type === 'required' ? choice.allowed : undefined;
}

export type ReasoningEffort = 'low' | 'medium' | 'high';

/**
 * Reasoning as the client asked for it. `enabled` false means the client asked for none (or
 * said nothing); the routing layer maps effort <-> budget per provider.
 */
export interface Reasoning {
  enabled: boolean;
  effort?: ReasoningEffort;
  budgetTokens?: number;
  /** Responses `reasoning.summary` (`auto`, `concise`, `detailed`). */
  summary?: string;
  /** Anthropic `{type:"adaptive"}`. */
  adaptive?: boolean;
  /** Anthropic `{type:"between_tools"}`: think only between tool calls, the model deciding how much (adaptive is set too). */
  betweenTools?: boolean;
  /** Anthropic `thinking.display` (`summarized`, `omitted`): how the thinking text comes back. */
  display?: string;
  /** The client's other `thinking` fields, with no IR home: an Anthropic upstream gets them unchanged. */
  extra?: Record<string, unknown>;
}

/**
 * Structured output: the answer's text is one JSON value. `json_object` asks for any JSON object
 * (OpenAI's JSON mode); `json_schema` for one that validates against `schema`. Plain text is the
 * absence of a format.
 */
export type ResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean };

/** `"default"`: the model's chain from the catalog; a list: these model ids in order; `[]`: none. */
export type Fallbacks = 'default' | string[];

export interface Request {
  /** Catalog model id as the client named it. */
  model: string;
  system: TextPart[];
  messages: Message[];
  tools: Tool[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  /** The output ceiling. Decoders apply their protocol's default when the client omits it. */
  maxTokens: number;
  /** True when the client did not send a ceiling (the default may be lowered to the model's limit). */
  maxTokensDefaulted: boolean;
  /** The client's name for the ceiling, for errors about it (`max_tokens` when absent). */
  maxTokensParam?: string;
  stream: boolean;
  /** Chat `stream_options.include_usage`. */
  includeUsage?: boolean;
  stopSequences?: string[];
  temperature?: number;
  topP?: number;
  reasoning: Reasoning;
  /** Chat `response_format`, Responses `text.format`, Messages `output_config.format`. */
  responseFormat?: ResponseFormat;
  fast: boolean;
  fallbacks: Fallbacks;
  /**
   * Request fields with no IR home, in the bag of the protocol they came from (bags.ts), so that a
   * same-protocol upstream receives them unchanged (e.g. `{ "anthropic": { fields: { metadata, ... } } }`).
   */
  ext: RequestExt;
  /** Headers that matter for same-protocol passthrough (`anthropic-beta`, `anthropic-version`). */
  passHeaders: Record<string, string>;
  /**
   * What of the request only an upstream speaking the client's protocol natively takes (server
   * tools, unknown body fields, beta headers, ...), as its decoder found it: the pipeline names
   * each in a warning for any other upstream. Absent: nothing.
   */
  nativeOnly?: NativeOnly[];
  /** What of the request its decoder could give no upstream, each named in a warning. Absent: nothing. */
  dropped?: DroppedFeature[];
  /** Who the request is for, as the client named it; recorded on the usage record. */
  attribution?: Attribution;
  /** What the request may be billed for beyond its tokens, as it asked: the hold covers it. */
  billing?: BillingHints;
}

/** Billing the request asked for that its tokens do not show (read by the hold). */
export interface BillingHints {
  /** Some `cache_control` asks for a one-hour cache write (Anthropic `ttl: "1h"`). */
  cacheWrite1h?: boolean;
  /** The most uses of each server tool it allows (`max_uses`), by tool (`web_search`, ...). */
  serverToolUses?: Record<string, number>;
}

/** Something of a request that only an upstream speaking its client's protocol natively takes. */
export interface NativeOnly {
  /** The client protocol (its bag key): an upstream whose `nativeProtocol` it is takes it. */
  protocol: ExtKey;
  /** Only such an upstream that also runs the protocol's server tools (`capabilities.serverTools`) takes it. */
  serverTools?: boolean;
  /** How the warning names the upstreams that take it: "the upstream is not <upstream>" (`Anthropic`, `Responses-speaking`). */
  upstream: string;
  /** What it is, as the warning names it (`server tools`, `fields`, `anthropic-beta`, `hosted tools`, ...). */
  feature: string;
  /** Which ones (tool types, field names, the header's value, ...), listed by the warning; empty: none are named. */
  names: string[];
  /** It is in the conversation's earlier turns (the warning says "dropped from the conversation"). */
  inConversation?: boolean;
}

/** Something of a request no upstream gets. */
export interface DroppedFeature {
  /** What it is, as the warning names it (`item_reference`). */
  feature: string;
  /** Why, as the warning says it (`no stored responses`). */
  reason: string;
  /** Which ones, listed by the warning. */
  names: string[];
}

/** The end user and session a client names, for cost attribution (never sent anywhere). */
export interface Attribution {
  endUser?: string;
  session?: string;
}
