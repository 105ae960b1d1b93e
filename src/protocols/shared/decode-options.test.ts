import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../ir/errors.js';
import { decodeGatewayOptions } from './decode-options.js';

const d = (body: Record<string, unknown>) => decodeGatewayOptions(body);

describe('decodeGatewayOptions', () => {
  it('defaults: no reasoning, not fast, default fallbacks', () => {
    expect(d({})).toEqual({ reasoning: { enabled: false }, fast: false, fallbacks: 'default', extras: {} });
  });

  it.each([
    [true, { enabled: true }],
    [false, { enabled: false }],
    [{ type: 'enabled' }, { enabled: true }],
    [{ type: 'enabled', budget_tokens: 2048 }, { enabled: true, budgetTokens: 2048 }],
    [{ type: 'disabled' }, { enabled: false }],
    [{ type: 'adaptive' }, { enabled: true, adaptive: true }],
    [{ type: 'adaptive', display: 'omitted' }, { enabled: true, adaptive: true, display: 'omitted' }],
    [{ type: 'between_tools' }, { enabled: true, adaptive: true, betweenTools: true }],
    [{ type: 'enabled', budget_tokens: 2048, display: 'summarized', future: 1 }, { enabled: true, budgetTokens: 2048, display: 'summarized', extra: { future: 1 } }],
  ])('thinking %j', (thinking, reasoning) => {
    expect(d({ thinking }).reasoning).toEqual(reasoning);
  });

  it('rejects an unknown thinking type with its param', () => {
    expect(() => d({ thinking: { type: 'sometimes' } })).toThrow(GatewayError);
    try {
      d({ thinking: { type: 'sometimes' } });
    } catch (e) {
      expect((e as GatewayError).param).toBe('thinking.type');
    }
  });

  it('maps effort and its alias; minimal/xhigh keep the raw value for same-protocol upstreams', () => {
    expect(d({ reasoning_effort: 'high' }).reasoning).toEqual({ enabled: true, effort: 'high' });
    expect(d({ thinking_effort: 'medium' }).reasoning).toEqual({ enabled: true, effort: 'medium' });
    expect(d({ reasoning_effort: 'minimal' })).toMatchObject({ reasoning: { enabled: true, effort: 'low' }, extras: { reasoning_effort: 'minimal' } });
    expect(d({ reasoning_effort: 'xhigh' })).toMatchObject({ reasoning: { enabled: true, effort: 'high' }, extras: { reasoning_effort: 'xhigh' } });
    expect(d({ thinking: true, reasoning_effort: 'none' }).reasoning).toEqual({ enabled: false });
    expect(() => d({ reasoning_effort: 'extreme' })).toThrow(/reasoning_effort/);
  });

  it('fast and speed alias', () => {
    expect(d({ fast: true }).fast).toBe(true);
    expect(d({ speed: 'fast' }).fast).toBe(true);
    expect(d({ speed: 'standard' }).fast).toBe(false);
  });

  it('fallbacks shapes', () => {
    expect(d({ fallbacks: 'default' }).fallbacks).toBe('default');
    expect(d({ fallbacks: [] }).fallbacks).toEqual([]);
    expect(d({ fallbacks: ['a', { model: 'b' }] }).fallbacks).toEqual(['a', 'b']);
    expect(() => d({ fallbacks: [{ name: 'x' }] })).toThrow(/fallback/);
    expect(() => d({ fallbacks: 'none' })).toThrow(/fallbacks/);
  });
});
