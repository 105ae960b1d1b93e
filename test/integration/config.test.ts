/**
 * The catalog config end to end: a gateway started from a YAML file in the minimal form serves
 * both provider types (reached over HTTP at the fake upstream, with the key from the environment),
 * lists the models, and a broken file stops the start with a message naming the entry.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/app/start-gateway.js';
import { loadConfigFile } from '../../src/config/load-config.js';
import type { FakeUpstream } from '../../tools/fake-upstream/index.js';
import { startFakeGateway, startTestGateway, type FakeGateway, type TestGateway } from '../support/gateway.js';

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-config-it-'));
let started: FakeGateway | undefined;
let fake: FakeUpstream;
let gw: TestGateway;

function minimalYaml(fakeUrl: string): string {
  return [
    'providers:',
    '  oai:',
    '    type: openai',
    `    base_url: ${fakeUrl}/v1`,
    '    api_key_env: SWITCHYARD_IT_OPENAI_KEY',
    '  ant:',
    '    type: anthropic',
    `    base_url: ${fakeUrl}`,
    '    api_key_env: SWITCHYARD_IT_ANTHROPIC_KEY',
    'models:',
    '  - id: gpt',
    '    provider: oai',
    '    upstream_model: gpt-4o-mini',
    // The price table prices these models at OpenAI's and Anthropic's URLs, not at the fake's.
    '    free: true',
    '  - id: claude',
    '    provider: ant',
    '    upstream_model: claude-sonnet-4-5',
    '    free: true',
    '',
  ].join('\n');
}

beforeAll(async () => {
  process.env.SWITCHYARD_IT_OPENAI_KEY = 'sk-it-openai';
  process.env.SWITCHYARD_IT_ANTHROPIC_KEY = 'sk-it-anthropic';
  const file = path.join(dir, 'minimal.yaml');
  started = await startFakeGateway((f) => {
    writeFileSync(file, minimalYaml(f.url));
    return { configPath: file };
  }, { scenario: { words: 6 } });
  ({ fake, gw } = started);
});
afterAll(async () => {
  await started?.close();
  delete process.env.SWITCHYARD_IT_OPENAI_KEY;
  delete process.env.SWITCHYARD_IT_ANTHROPIC_KEY;
});

describe('a gateway started from a minimal YAML config', () => {
  it('lists the configured models', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
    const ids = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual(['claude', 'gpt']);
  });

  it('reaches the openai provider with the key from the environment and the upstream model name', async () => {
    fake.reset();
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
    const res = await client.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.choices[0].message.content).toBe('Switchyard routes tokens through many models');
    expect(fake.requests[0]).toMatchObject({ path: '/v1/chat/completions', body: { model: 'gpt-4o-mini' } });
    expect(fake.requests[0].headers.authorization).toBe('Bearer sk-it-openai');
  });

  it('reaches the anthropic provider the same way', async () => {
    fake.reset();
    const client = new Anthropic({ baseURL: gw.url, apiKey: gw.key });
    const msg = await client.messages.create({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    expect(msg.content).toEqual([{ type: 'text', text: 'Switchyard routes tokens through many models' }]);
    expect(fake.requests[0]).toMatchObject({ path: '/v1/messages', body: { model: 'claude-sonnet-4-5' } });
    expect(fake.requests[0].headers['x-api-key']).toBe('sk-it-anthropic');
  });
});

describe('an invalid config stops the start', () => {
  it.each([
    ['an unknown provider', (y: string) => y.replace('provider: ant', 'provider: antropic'), /models\[1\] \(id "claude"\): provider "antropic" is not declared/],
    ['a duplicate id', (y: string) => y.replace('id: claude', 'id: gpt'), /models\[1\] \(id "gpt"\): duplicate model id/],
    ['a bad price', (y: string) => `${y.trimEnd()}\n    price: { input: "0.0000000005" }\n`, /models\[1\] \(id "claude"\): price\.input/],
    ['models without a known price', (y: string) => y.replaceAll('    free: true\n', ''), /no price is known for these models:\n {2}model "gpt" \(upstream model "gpt-4o-mini" at http:\/\/127\.0\.0\.1:\d+\/v1\)\n {2}model "claude"/],
    ['a missing env var', (y: string) => y.replace('SWITCHYARD_IT_ANTHROPIC_KEY', 'SWITCHYARD_IT_UNSET_KEY'), /providers\.ant: environment variable SWITCHYARD_IT_UNSET_KEY/],
    ['an unknown fallback', (y: string) => `${y.trimEnd()}\n    fallbacks: [gemini]\n`, /model "claude": fallback "gemini" is not a model/],
  ])('with %s', async (_name, edit, message) => {
    const file = path.join(dir, `bad-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, edit(minimalYaml(fake.url)));
    // The catalog is read before the database or the port is touched.
    await expect(startGateway({ configPath: file, logLevel: 'silent', port: 0 })).rejects.toThrow(message);
  });
});

describe('the shipped test catalog', () => {
  it('config/fake-upstream.yaml loads and points both provider types at the fake', () => {
    const file = path.resolve(import.meta.dirname, '../../config/fake-upstream.yaml');
    const c = loadConfigFile(file, {});
    expect(c.providers.get('fake-openai')).toMatchObject({ type: 'openai', baseUrl: 'http://127.0.0.1:9100/v1' });
    expect(c.providers.get('fake-anthropic')).toMatchObject({ type: 'anthropic', baseUrl: 'http://127.0.0.1:9100' });
    expect(c.providers.get('fake-gemini')).toMatchObject({ type: 'gemini', baseUrl: 'http://127.0.0.1:9100/v1beta' });
    expect(readFileSync(file, 'utf8')).toContain('fake-upstream');
  });

  it('every model of config/fake-upstream.yaml answers, from the clone alone (the fake on another port)', async () => {
    const text = readFileSync(path.resolve(import.meta.dirname, '../../config/fake-upstream.yaml'), 'utf8');
    const file = path.join(dir, 'fake-upstream.yaml');
    writeFileSync(file, text.replaceAll('http://127.0.0.1:9100', fake.url));
    const shipped = await startTestGateway({ configPath: file });
    try {
      const ids = [...shipped.gateway.catalog.models.keys()];
      expect(ids.length).toBeGreaterThanOrEqual(5);
      const client = new OpenAI({ baseURL: `${shipped.url}/v1`, apiKey: shipped.key, maxRetries: 0 });
      for (const model of ids) {
        const r = await client.chat.completions.create({ model, max_tokens: 1000, messages: [{ role: 'user', content: 'Hi' }] });
        const message = r.choices[0].message;
        expect(message.content || message.tool_calls?.length, model).toBeTruthy();
      }
    } finally {
      await shipped.close();
    }
  }, 120_000);
});
