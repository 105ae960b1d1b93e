/**
 * The built-in local models: an in-process provider that answers deterministically from the
 * conversation, calls tools, reasons, honours the ceiling, stop sequences and aborts, refuses on
 * the refusal test trigger, and streams at the catalog's tokens per second. No I/O, so it has no
 * `api` / `encode-request` / `decode-*` files: the IR goes in and the IR comes out.
 */
import type { Provider, ProviderCall, ProviderCapabilities } from '../types.js';
import { generate, LOCAL_KIND } from './generate.js';
import { localModels } from './models.js';
import { LOCAL_PROVIDER, localOptionsSpec } from './options.js';

/** The same for every target of this kind. */
const CAPABILITIES: ProviderCapabilities = {
  thinking: { minBudget: 0, forcedToolBlocksThinking: false },
  jsonMode: true,
  serverTools: false,
  // Signed like Anthropic's thinking (sign-reasoning.ts), so clients may carry the signature.
  signatures: { family: LOCAL_KIND, opaque: false },
};

export const localProvider = {
  type: LOCAL_KIND,
  genAiName: 'switchyard.local',
  defaultBaseUrl: 'local://',
  capabilities: () => CAPABILITIES,
  options: localOptionsSpec,
  builtIn: { provider: LOCAL_PROVIDER, get models() { return localModels(); } },
  stream: (call: ProviderCall) => generate(call),
} satisfies Provider;

export { REFUSAL_TRIGGER } from './read-conversation.js';
