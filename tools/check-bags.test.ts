import { afterEach, describe, expect, it } from 'vitest';
import { checkScript } from './check-script-harness.js';

const { tree, check, cleanup } = checkScript('check-bags.mjs');
afterEach(cleanup);

/** Each bag read where it may be: the IR's definitions, its protocol, a provider speaking it natively. */
const good = {
  'ir/bags.ts': "export const CHAT_EXT = 'openai-chat';\nexport const MESSAGES_EXT = 'anthropic';\nexport const RESPONSES_EXT = 'openai-responses';\n",
  'protocols/anthropic-messages/decode-request.ts': "import { MESSAGES_EXT } from '../../ir/bags.js';\nconst ext = { [MESSAGES_EXT]: {} };\n",
  'protocols/anthropic-messages/encode-response.ts': 'export const f = (p) => ({ ...p.ext?.anthropic });\n',
  'protocols/openai-responses/build-response.ts': "export const f = (req) => req.ext['openai-responses'];\n",
  'providers/anthropic/index.ts': "import { MESSAGES_EXT } from '../../ir/bags.js';\nexport const caps = { nativeProtocol: MESSAGES_EXT };\n",
  'providers/anthropic/encode-request.ts': "import { MESSAGES_EXT } from '../../ir/bags.js';\nexport const f = (r) => r.ext[MESSAGES_EXT];\n",
  // Other providers name the key word in their own sense (a signature family, a model name).
  'providers/gemini/encode-request.ts': "export const family = 'anthropic';\nexport const model = 'us.anthropic.claude';\n",
  'pipeline/dropped-features.ts': 'export const f = (req, can) => (req.nativeOnly ?? []).filter((n) => can.nativeProtocol !== n.protocol);\n',
};

describe('check-bags', () => {
  it('passes bags read by their protocol, their native providers and the IR', () => {
    const { ok, output } = check(tree(good));
    expect(ok).toBe(true);
    expect(output).toContain('MESSAGES_EXT: anthropic');
  });

  it.each([
    ['the pipeline reading the Messages bag by its constant', 'pipeline/dropped-features.ts', "import { MESSAGES_EXT } from '../ir/index.js';\nexport const f = (req) => req.ext[MESSAGES_EXT]?.serverTools;\n", 'MESSAGES_EXT'],
    ['the pipeline reading the Responses bag by its literal key', 'pipeline/dropped-features.ts', "export const f = (req) => req.ext['openai-responses']?.hostedTools;\n", 'RESPONSES_EXT'],
    ['a handler reading the Messages bag as a property', 'handlers/complete.ts', 'export const f = (req) => req.ext?.anthropic?.fields;\n', 'MESSAGES_EXT'],
    ['a destructured bag', 'routing/pick.ts', "export const f = (req) => { const { 'openai-chat': chat } = req.ext; return chat; };\n", 'CHAT_EXT'],
    ['another protocol reading the Chat bag', 'protocols/anthropic-messages/encode-response.ts', "import { CHAT_EXT } from '../../ir/bags.js';\nexport const f = (p) => p.ext?.[CHAT_EXT];\n", 'CHAT_EXT'],
    ['a provider that does not speak the protocol natively', 'providers/gemini/encode-request.ts', "export const f = (r) => r.ext['anthropic'];\n", 'MESSAGES_EXT'],
  ])('fails on %s', (_what, file, text, name) => {
    const { ok, output } = check(tree({ ...good, [file]: text }));
    expect(ok).toBe(false);
    expect(output).toContain(`${name} (`);
    expect(output).toContain(file);
  });
});
