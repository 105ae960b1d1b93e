/** The one builder of a base IR Request for tests; each suite overrides only what it cares about. */
import type { Request } from '../../src/ir/index.js';

/** A streamed, non-reasoning request for `test-model` with one short user turn. */
export function baseRequest(over: Partial<Request> = {}): Request {
  return {
    model: 'test-model',
    system: [],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    tools: [],
    maxTokens: 1024,
    maxTokensDefaulted: false,
    stream: true,
    reasoning: { enabled: false },
    fast: false,
    fallbacks: 'default',
    ext: {},
    passHeaders: {},
    ...over,
  };
}
