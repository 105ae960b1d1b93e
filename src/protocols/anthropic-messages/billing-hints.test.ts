import { describe, expect, it } from 'vitest';
import { ASSUMED_SERVER_TOOL_USES, billingHints } from './billing-hints.js';

describe('billingHints: what the hold must cover beyond tokens', () => {
  it('none for a plain request', () => {
    expect(billingHints({ messages: [{ role: 'user', content: 'Hi' }] })).toBeUndefined();
  });

  it('a one-hour cache write, wherever a cache_control asks for it', () => {
    const oneHour = { type: 'ephemeral', ttl: '1h' };
    expect(billingHints({ cache_control: oneHour, messages: [] })).toEqual({ cacheWrite1h: true });
    expect(billingHints({ system: [{ type: 'text', text: 's', cache_control: oneHour }], messages: [] })).toEqual({ cacheWrite1h: true });
    expect(billingHints({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: oneHour }] }] })).toEqual({ cacheWrite1h: true });
    expect(billingHints({ tools: [{ name: 't', input_schema: {}, cache_control: oneHour }], messages: [] })).toEqual({ cacheWrite1h: true });
    // The default lifetime is 5 minutes: nothing beyond the usual write.
    expect(billingHints({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] }] })).toBeUndefined();
  });

  it('the uses a server tool allows, or the assumed number when it sets no max_uses', () => {
    expect(billingHints({ tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }], messages: [] })).toEqual({ serverToolUses: { web_search: 3 } });
    expect(billingHints({ tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }], messages: [] })).toEqual({ serverToolUses: { web_fetch: ASSUMED_SERVER_TOOL_USES } });
  });
});
