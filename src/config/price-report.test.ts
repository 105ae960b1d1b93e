import { describe, expect, it } from 'vitest';
import { buildCatalog } from './load-config.js';
import { priceReport, priceReportText } from './price-report.js';

const env = { OPENAI_API_KEY: 'sk-o', ANTHROPIC_API_KEY: 'sk-a' };

function catalog(gptPrice?: object) {
  return buildCatalog(
    {
      providers: { openai: { type: 'openai', api_key_env: 'OPENAI_API_KEY' }, anthropic: { type: 'anthropic', api_key_env: 'ANTHROPIC_API_KEY' } },
      models: [
        { id: 'gpt', provider: 'openai', upstream_model: 'gpt-4o-mini', ...(gptPrice ? { price: gptPrice } : {}) },
        { id: 'claude', provider: 'anthropic', upstream_model: 'claude-sonnet-4-5' },
      ],
    },
    env,
  );
}

describe('switchyard prices', () => {
  it('shows each deployment\'s effective rates, tiers and fees, and where its price came from', () => {
    const [gpt, claude] = priceReport(catalog());
    expect(gpt).toMatchObject({ deployment: 'gpt/0', source: expect.stringMatching(/^price table \d+\.\d+\.\d+ \(openai\/gpt-4o-mini\)$/), rates: { input: '0.15', output: '0.6', cache_read: '0.075' } });
    expect(gpt.service_tiers?.flex.rates).toMatchObject({ input: '0.075', output: '0.3' });
    expect(claude).toMatchObject({
      rates: { input: '3', output: '15', cache_read: '0.3', cache_write: '3.75', cache_write_1h: '6' },
      long_context: [{ above: 200_000, rates: { input: '6', output: '22.5' } }],
      server_tools: { web_search: '10' },
    });
    expect(gpt.differs_from_table).toBeUndefined();
  });

  it('flags each configured rate that differs from the price table\'s', () => {
    const [gpt] = priceReport(catalog({ input: '0.15', output: '0.70', cache_read: '0.075' }));
    expect(gpt.source).toBe('config');
    expect(gpt.differs_from_table).toEqual(
      expect.arrayContaining([
        { rate: 'output', configured: '0.7', table: '0.6' },
        { rate: 'service_tiers.flex.output', configured: '0.35', table: '0.3' },
      ]),
    );
    expect(gpt.differs_from_table?.map((d) => d.rate)).not.toContain('input');
    expect(priceReportText([gpt])).toContain('! output: configured 0.7, the price table 0.6');
  });
});
