import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findModel } from '../routing/catalog.js';
import { openaiProvider } from '../providers/openai/index.js';
import { withProviders } from '../providers/registry.js';
import type { Provider } from '../providers/types.js';
import { buildCatalog, ConfigError, loadConfigFile } from './load-config.js';

/** $1 per million tokens, in the price model's unit (femtodollars per token). */
const M = 1_000_000_000n;

const env = { OPENAI_API_KEY: 'sk-o', ANTHROPIC_API_KEY: 'sk-a' };

/** The minimal form scripts rely on. */
function minimal(): any {
  return {
    providers: {
      openai: { type: 'openai', base_url: 'https://api.openai.com/v1', api_key_env: 'OPENAI_API_KEY' },
      anthropic: { type: 'anthropic', base_url: 'https://api.anthropic.com', api_key_env: 'ANTHROPIC_API_KEY' },
    },
    models: [
      { id: 'gpt', provider: 'openai', upstream_model: 'gpt-4o-mini' },
      { id: 'claude', provider: 'anthropic', upstream_model: 'claude-sonnet-4-5' },
    ],
  };
}

function errorOf(doc: unknown, e: NodeJS.ProcessEnv = env): string {
  try {
    buildCatalog(doc, e, 'test.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('buildCatalog: the minimal form', () => {
  it('works with defaults for everything optional', () => {
    const c = buildCatalog(minimal(), env);
    expect(c.providers.get('openai')).toMatchObject({ type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-o', maxRetries: 2, headers: {} });
    expect(c.providers.get('anthropic')).toMatchObject({ apiKey: 'sk-a', timeouts: { connectMs: 10_000, firstByteMs: 120_000, idleMs: 120_000, responseMs: 600_000 } });
    expect(c.models.get('claude')).toMatchObject({
      // One deployment, named "0": the model's provider and upstream model.
      deployments: [{ id: 'claude/0', name: '0', provider: { id: 'anthropic' }, upstreamModel: 'claude-sonnet-4-5', weight: 1 }],
      routing: { strategy: 'weighted', sessionAffinity: true },
      // Not configured: the price table's, for this model at Anthropic's URL, its long-context tier and web search fee included.
      price: {
        input: 3n * M,
        output: 15n * M,
        cacheRead: 300_000_000n,
        cacheWrite: 3_750_000_000n,
        cacheWrite1h: 6n * M,
        tiers: [{ above: 200_000, rates: { input: 6n * M, output: 22_500_000_000n, cacheRead: 600_000_000n, cacheWrite: 7_500_000_000n, cacheWrite1h: 12n * M } }],
        perUse: { web_search: 10_000_000_000_000n },
      },
      contextWindow: 200_000,
      fallbacks: [],
      aliases: [],
      capabilities: { tools: true, reasoning: false, images: true },
    });
  });

  it('reads the full form: prices per kind, headers, timeouts, fast variant, fallbacks, aliases', () => {
    const doc = minimal();
    doc.providers.openai.headers = { 'OpenAI-Organization': 'org-1' };
    doc.providers.openai.timeouts = { connect_ms: 500, first_byte_ms: 2000, idle_ms: 3000, response_ms: 4000 };
    Object.assign(doc.models[1], {
      price: { input: '3.00', output: 15, cache_read: '0.30', cache_write: '3.75' },
      context_window: 200000,
      max_output_tokens: 64000,
      capabilities: { reasoning: true },
      fast: { speed: 'fast', price: { input: '6', output: '30' } },
      fallbacks: ['gpt'],
      aliases: ['sonnet'],
    });
    const c = buildCatalog(doc, env);
    expect(c.providers.get('openai')).toMatchObject({ headers: { 'OpenAI-Organization': 'org-1' }, timeouts: { connectMs: 500, firstByteMs: 2000, idleMs: 3000, responseMs: 4000 } });
    const claude = c.models.get('claude')!;
    // Claude's 1-hour cache write, not configured, is Anthropic's documented 2x input.
    expect(claude.price).toEqual({ input: 3n * M, output: 15n * M, cacheRead: 300_000_000n, cacheWrite: 3_750_000_000n, cacheWrite1h: 6n * M });
    expect(claude.fast).toMatchObject({ options: { speed: 'fast' }, price: { input: 6n * M, output: 30n * M } });
    expect(claude.capabilities).toEqual({ tools: true, reasoning: true, images: true });
    expect(c.aliases.get('sonnet')).toBe('claude');
    expect(claude.fallbacks).toEqual(['gpt']);
  });

  it('a keyless local server (vLLM, Ollama) needs no api_key_env', () => {
    const doc = { providers: { ollama: { type: 'openai', base_url: 'http://127.0.0.1:11434/v1' } }, models: [{ id: 'llama', provider: 'ollama', upstream_model: 'llama3.2', free: true }] };
    expect(buildCatalog(doc, {}).providers.get('ollama')?.apiKey).toBeUndefined();
  });
});

describe('buildCatalog: no model is free by accident', () => {
  it('an unpriced model takes the price table\'s price and context window for its upstream model at its provider', () => {
    const c = buildCatalog(minimal(), env);
    // gpt-4o-mini at OpenAI: $0.15 / $0.60 per million, cache reads $0.075; OpenAI bills cache writes as input;
    // its flex tier is half price (OpenAI's documented rule).
    const gpt = c.models.get('gpt')!;
    expect(gpt).toMatchObject({ price: { input: 150_000_000n, output: 600_000_000n, cacheRead: 75_000_000n, cacheWrite: 150_000_000n, cacheWrite1h: 150_000_000n }, contextWindow: 128_000 });
    expect(gpt.price.serviceTiers?.flex).toMatchObject({ input: 75_000_000n, output: 300_000_000n, cacheRead: 37_500_000n });
  });

  it('configuration always wins: a configured price completed by the documented multipliers, and a configured context window', () => {
    const doc = minimal();
    Object.assign(doc.models[1], { price: { input: '1.00', output: '2.00' }, context_window: 100_000 });
    // Claude: cache reads 0.1x, 5-minute writes 1.25x, 1-hour writes 2x the input price.
    expect(buildCatalog(doc, env).models.get('claude')).toMatchObject({
      price: { input: M, output: 2n * M, cacheRead: M / 10n, cacheWrite: (M * 5n) / 4n, cacheWrite1h: 2n * M },
      contextWindow: 100_000,
    });
    // Without a documented rule, a cache price left out is the input price: never below plain input.
    Object.assign(doc.models[0], { price: { input: '1.00', output: '2.00' } });
    doc.providers.openai.base_url = 'https://proxy.example/v1';
    expect(buildCatalog(doc, env).models.get('gpt')?.price).toEqual({ input: M, output: 2n * M, cacheRead: M, cacheWrite: M, cacheWrite1h: M });
  });

  it('reads prices finer than a thousandth of a dollar per million, tiers, per-use fees and service tiers', () => {
    const doc = minimal();
    Object.assign(doc.models[0], {
      price: {
        input: '0.0375',
        output: '0.15',
        reasoning: '0.6',
        input_audio: '10',
        long_context: [{ above: 128000, input: '0.075', output: '0.3' }],
        server_tools: { web_search: '25' },
        service_tiers: { priority: { input: '0.07', output: '0.28' }, flex: { multiplier: '0.4' } },
      },
    });
    const p = buildCatalog(doc, env).models.get('gpt')!.price;
    expect(p).toMatchObject({ input: 37_500_000n, output: 150_000_000n, reasoning: 600_000_000n, inputAudio: 10n * M, perUse: { web_search: 25_000_000_000_000n } });
    expect(p.tiers).toEqual([{ above: 128_000, rates: { input: 75_000_000n, output: 300_000_000n, cacheRead: 75_000_000n, cacheWrite: 75_000_000n, cacheWrite1h: 75_000_000n, reasoning: 600_000_000n, inputAudio: 10n * M } }]);
    expect(p.serviceTiers?.priority).toMatchObject({ input: 70_000_000n, output: 280_000_000n });
    // The configured flex multiplier wins over OpenAI's documented half.
    expect(p.serviceTiers?.flex).toMatchObject({ input: 15_000_000n, output: 60_000_000n, tiers: [{ above: 128_000, rates: { input: 30_000_000n } }] });
  });

  it('refuses a price finer than a billionth of a dollar per million tokens', () => {
    const doc = minimal();
    Object.assign(doc.models[0], { price: { input: '0.0000000001', output: '1' } });
    expect(errorOf(doc)).toMatch(/price\.input: 0\.0000000001 has more precision than prices are kept in \(9 decimal places\)/);
  });

  it('a model whose price nobody knows stops the start, every such model named, unless it is free: true', () => {
    const doc = minimal();
    doc.providers.vllm = { type: 'openai', base_url: 'http://127.0.0.1:8000/v1' };
    // Known to the table at OpenAI's URL, not at this one: a local server's price is not OpenAI's.
    doc.models.push({ id: 'qwen', provider: 'vllm', upstream_model: 'Qwen/Qwen2.5-7B-Instruct' }, { id: 'mini', provider: 'vllm', upstream_model: 'gpt-4o-mini' });
    const message = errorOf(doc);
    expect(message).toContain('test.yaml: no price is known for these models:');
    expect(message).toContain('model "qwen" (upstream model "Qwen/Qwen2.5-7B-Instruct" at http://127.0.0.1:8000/v1)');
    expect(message).toContain('model "mini" (upstream model "gpt-4o-mini" at http://127.0.0.1:8000/v1)');
    expect(message).toContain('free: true');
    expect(message).not.toContain('"claude"');
    doc.models[2].free = true;
    doc.models[3].price = { input: '0.10', output: '0.20' };
    const c = buildCatalog(doc, env);
    expect(c.models.get('qwen')?.price).toEqual({ input: 0n, output: 0n, cacheRead: 0n, cacheWrite: 0n, cacheWrite1h: 0n });
    expect(c.models.get('mini')?.price).toMatchObject({ input: 100_000_000n, output: 200_000_000n });
  });

  it('free: true and a price contradict each other', () => {
    const doc = minimal();
    Object.assign(doc.models[0], { free: true, price: { input: '1' } });
    expect(errorOf(doc)).toMatch(/models\[0\] \(id "gpt"\): a model with a price cannot be free: true/);
  });

  it('a model on a local provider keeps the built-in local model\'s price', () => {
    const doc = { providers: { here: { type: 'local' } }, models: [{ id: 'house', provider: 'here', upstream_model: 'local-haiku' }, { id: 'odd', provider: 'here', upstream_model: 'local-nope' }] };
    expect(() => buildCatalog(doc, {})).toThrow(/no price is known for this model:\n  model "odd" \(upstream model "local-nope" at/);
    doc.models.pop();
    expect(buildCatalog(doc, {}).models.get('house')?.price).toEqual({ input: M, output: 5n * M, cacheRead: M / 10n, cacheWrite: (M * 5n) / 4n, cacheWrite1h: 2n * M });
  });
});

describe('buildCatalog: invalid config names the bad entry', () => {
  it('unknown provider', () => {
    const doc = minimal();
    doc.models[1].provider = 'antropic';
    expect(errorOf(doc)).toMatch(/models\[1\] \(id "claude"\): provider "antropic" is not declared/);
  });

  it('duplicate model id', () => {
    const doc = minimal();
    doc.models[1].id = 'gpt';
    expect(errorOf(doc)).toMatch(/models\[1\] \(id "gpt"\): duplicate model id/);
  });

  it('price with more precision than prices are kept in', () => {
    const doc = minimal();
    doc.models[0].price = { input: '0.0000000001' };
    expect(errorOf(doc)).toMatch(/models\[0\] \(id "gpt"\): price\.input: 0\.0000000001 has more precision/);
  });

  it('a price that is not a decimal', () => {
    const doc = minimal();
    doc.models[0].price = { output: '-1' };
    expect(errorOf(doc)).toMatch(/\(id "gpt"\): price\.output/);
  });

  it('a price too large to answer exactly as a JSON number', () => {
    const doc = minimal();
    doc.models[0].price = { input: '99999999999999999999' };
    expect(errorOf(doc)).toMatch(/\(id "gpt"\): price\.input.* is too large/);
  });

  it('missing environment variable', () => {
    expect(errorOf(minimal(), { OPENAI_API_KEY: 'x' })).toMatch(/providers\.anthropic: environment variable ANTHROPIC_API_KEY \(api_key_env\) is not set/);
  });

  it('unknown fallback', () => {
    const doc = minimal();
    doc.models[0].fallbacks = ['claude', 'gemini'];
    expect(errorOf(doc)).toMatch(/model "gpt": fallback "gemini" is not a model/);
  });

  it('unknown provider type and unknown keys, by path', () => {
    const doc = minimal();
    doc.providers.openai.type = 'cohere';
    doc.models[1].upstream = 'x';
    const msg = errorOf(doc);
    expect(msg).toMatch(/providers\.openai\.type must be equal to one of the allowed values: "openai", "anthropic"/);
    expect(msg).toMatch(/models\[1\] \(id "claude"\) must NOT have additional properties: "upstream"/);
  });

  it('missing upstream_model', () => {
    const doc = minimal();
    delete doc.models[0].upstream_model;
    expect(errorOf(doc)).toMatch(/models\[0\] \(id "gpt"\): a model needs provider and upstream_model, or a list of deployments/);
  });

  it('an alias that collides with a model id', () => {
    const doc = minimal();
    doc.models[0].aliases = ['claude'];
    expect(errorOf(doc)).toMatch(/alias "claude" of model "gpt" is already taken/);
  });
});

describe('buildCatalog: a provider kind\'s own options', () => {
  // A kind with settings of its own, as Bedrock (a region) or Vertex (a project) declare them.
  const regional: Provider = {
    ...openaiProvider,
    type: 'regional',
    options: {
      schema: { type: 'object', additionalProperties: false, required: ['region'], properties: { region: { type: 'string', pattern: '^[a-z0-9-]+$' } } },
      build: (raw, e) => {
        if (raw.region === 'nowhere') throw new Error('region "nowhere" does not exist');
        return { region: raw.region, profile: e.REGION_PROFILE ?? 'default' };
      },
    },
  };
  const registry = withProviders(regional);
  const docWith = (options: unknown, type = 'regional') => {
    const doc = minimal();
    doc.providers.openai = { type, base_url: 'https://example.test', api_key_env: 'OPENAI_API_KEY', ...(options === undefined ? {} : { options }) };
    doc.models[0].free = true;
    return doc;
  };
  const build = (doc: unknown) => buildCatalog(doc, { ...env, REGION_PROFILE: 'p1' }, 'test.yaml', { providers: registry });
  const failure = (doc: unknown) => {
    try {
      build(doc);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('are validated by the kind\'s schema and built by its build', () => {
    expect(build(docWith({ region: 'eu-west-1' })).providers.get('openai')!.options).toEqual({ region: 'eu-west-1', profile: 'p1' });
  });

  it('a mistake names the entry: a missing or unknown setting, one the build refuses', () => {
    expect(failure(docWith({}))).toMatch(/providers\.openai\.options must have required property 'region'/);
    expect(failure(docWith({ region: 'x', zone: 'a' }))).toMatch(/providers\.openai\.options must NOT have additional properties: "zone"/);
    expect(failure(docWith({ region: 'nowhere' }))).toMatch(/providers\.openai\.options: region "nowhere" does not exist/);
  });

  it('a kind that declares no options takes none', () => {
    expect(failure(docWith({ region: 'x' }, 'openai'))).toMatch(/providers\.openai must NOT have property 'options'|providers\.openai must NOT be valid/);
  });
});

describe('loadConfigFile', () => {
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

  it('loads YAML, and reports unreadable or broken files', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-config-'));
    const file = path.join(dir, 'c.yaml');
    writeFileSync(file, 'providers:\n  o: {type: openai, base_url: "http://127.0.0.1:8000/v1"}\nmodels:\n  - {id: m, provider: o, upstream_model: qwen, free: true}\n');
    expect(loadConfigFile(file, {}).models.get('m')?.deployments[0].upstreamModel).toBe('qwen');
    writeFileSync(file, 'providers: [unclosed');
    expect(() => loadConfigFile(file, {})).toThrow(/is not valid YAML/);
    expect(() => loadConfigFile(path.join(dir, 'missing.yaml'), {})).toThrow(/cannot read config/);
  });

  it('the documented example loads with its keys set', () => {
    const keys = { OPENAI_API_KEY: 'a', ANTHROPIC_API_KEY: 'b', OPENROUTER_API_KEY: 'c', DEEPSEEK_API_KEY: 'd', GEMINI_API_KEY: 'e' };
    const c = loadConfigFile(path.join(repo, 'config/example.yaml'), keys);
    expect([...c.providers.values()].map((p) => p.id).sort()).toEqual(['anthropic', 'deepseek', 'gemini', 'ollama', 'openai', 'openrouter', 'vllm']);
    expect(c.providers.get('gemini')).toMatchObject({ type: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', apiKey: 'e' });
    expect(c.models.size).toBeGreaterThanOrEqual(6);
  });

  it('the example names the missing key when one is unset', () => {
    expect(() => loadConfigFile(path.join(repo, 'config/example.yaml'), {})).toThrow(/api_key_env/);
  });
});

describe('model-name patterns', () => {
  function withPatterns(): any {
    const doc = minimal();
    doc.models.push({ id: 'fast', provider: 'anthropic', upstream_model: 'claude-haiku-4-5', patterns: ['claude-*haiku*'], aliases: ['claude-haiku-alias'] });
    doc.models[1].patterns = ['claude-*', 'gpt-5.?-codex*'];
    return doc;
  }
  const served = (name: string) => findModel(buildCatalog(withPatterns(), env), name)?.id;

  it('a name no id or alias knows goes to the most specific pattern that matches, wherever written', () => {
    expect(served('claude-sonnet-4-5-20250929')).toBe('claude');
    // claude-* comes first in the file, but claude-*haiku* says more.
    expect(served('claude-haiku-4-5-20251001')).toBe('fast');
    expect(served('claude-3-5-haiku-latest')).toBe('fast');
    const doc = withPatterns();
    doc.models[1].patterns = ['claude-*sonnet*'];
    const c = buildCatalog(doc, env);
    expect(findModel(c, 'claude-opus-4-1')).toBeUndefined();
  });

  it('between equally specific patterns, the first in the file wins', () => {
    const doc = minimal();
    doc.models[0].patterns = ['*codex'];
    doc.models[1].patterns = ['gpt-5*'];
    expect(findModel(buildCatalog(doc, env), 'gpt-5-codex')?.id).toBe('gpt');
    [doc.models[0], doc.models[1]] = [doc.models[1], doc.models[0]];
    expect(findModel(buildCatalog(doc, env), 'gpt-5-codex')?.id).toBe('claude');
  });

  it('exact ids and aliases win over patterns; only * is special', () => {
    expect(served('claude')).toBe('claude');
    expect(served('fast')).toBe('fast');
    expect(served('claude-haiku-alias')).toBe('fast');
    expect(served('gpt-5.?-codex-mini')).toBe('claude');
    expect(served('gpt-5.1-codex')).toBeUndefined();
    expect(served('xclaude-sonnet')).toBeUndefined();
  });

  it('a pattern without * or taken twice is refused at start, naming it', () => {
    const exact = minimal();
    exact.models[0].patterns = ['gpt-4o'];
    expect(errorOf(exact)).toMatch(/pattern "gpt-4o" of model "gpt" has no \*/);
    const twice = minimal();
    twice.models[0].patterns = ['claude-*'];
    twice.models[1].patterns = ['claude-*'];
    expect(errorOf(twice)).toMatch(/pattern "claude-\*" of model "claude" is already a pattern of model "gpt"/);
  });
});

describe('buildCatalog: deployments', () => {
  /** claude served directly and through a second Anthropic account, with a price of its own. */
  function twoAccounts(): any {
    const doc = minimal();
    doc.providers.anthropic_b = { type: 'anthropic', base_url: 'https://api.anthropic.com', api_key_env: 'ANTHROPIC_API_KEY' };
    doc.models[1] = {
      id: 'claude',
      price: { input: '3', output: '15' },
      routing: { strategy: 'least_in_flight' },
      deployments: [
        { provider: 'anthropic', upstream_model: 'claude-sonnet-4-5', weight: 3 },
        { name: 'second', provider: 'anthropic_b', upstream_model: 'claude-sonnet-4-5-20250929', price: { input: '4', output: '20' }, max_output_tokens: 8000 },
      ],
    };
    return doc;
  }

  it('reads each deployment: id <model>/<name> (name defaults to the index), weight (default 1), its own price and ceiling, else the model\'s', () => {
    const claude = buildCatalog(twoAccounts(), env).models.get('claude')!;
    expect(claude.routing).toEqual({ strategy: 'least_in_flight', sessionAffinity: true });
    expect(claude.deployments).toMatchObject([
      { id: 'claude/0', name: '0', provider: { id: 'anthropic' }, upstreamModel: 'claude-sonnet-4-5', weight: 3, price: { input: 3n * M, output: 15n * M } },
      { id: 'claude/second', name: 'second', provider: { id: 'anthropic_b' }, upstreamModel: 'claude-sonnet-4-5-20250929', weight: 1, price: { input: 4n * M, output: 20n * M }, maxOutputTokens: 8000 },
    ]);
    expect(claude.deployments[0].maxOutputTokens).toBeUndefined();
    // The models list shows the model's price.
    expect(claude.price).toMatchObject({ input: 3n * M, output: 15n * M });
  });

  it('an unpriced deployment takes the price table\'s price for its own upstream model and provider', () => {
    const doc = twoAccounts();
    delete doc.models[1].price;
    const claude = buildCatalog(doc, env).models.get('claude')!;
    expect(claude.deployments[0].price).toMatchObject({ input: 3n * M, output: 15n * M, cacheRead: 300_000_000n, cacheWrite: 3_750_000_000n, cacheWrite1h: 6n * M });
    expect(claude.price).toEqual(claude.deployments[0].price);
  });

  it('an unpriced deployment is named when nothing knows its price', () => {
    const doc = twoAccounts();
    delete doc.models[1].price;
    doc.providers.vllm = { type: 'openai', base_url: 'http://127.0.0.1:8000/v1' };
    doc.models[1].deployments.push({ name: 'house', provider: 'vllm', upstream_model: 'qwen' });
    expect(errorOf(doc)).toMatch(/no price is known for this model:\n {2}model "claude" deployment "house" \(upstream model "qwen" at http:\/\/127.0.0.1:8000\/v1\)/);
  });

  it('errors name the model and the deployment', () => {
    const unknown = twoAccounts();
    unknown.models[1].deployments[1].provider = 'anthropic_c';
    expect(errorOf(unknown)).toMatch(/models\[1\] \(id "claude"\)\.deployments\[1\] \(name "second"\): provider "anthropic_c" is not declared under providers/);
    const twice = twoAccounts();
    twice.models[1].deployments[1].name = '0';
    expect(errorOf(twice)).toMatch(/models\[1\] \(id "claude"\)\.deployments\[1\] \(name "0"\): duplicate deployment name/);
    const both = twoAccounts();
    both.models[1].provider = 'anthropic';
    expect(errorOf(both)).toMatch(/models\[1\] \(id "claude"\): a model with deployments names its provider and upstream_model in each deployment/);
    const ceiling = twoAccounts();
    ceiling.models[1].deployments[1].max_output_tokens = 300_000;
    expect(errorOf(ceiling)).toMatch(/deployments\[1\] \(name "second"\): max_output_tokens exceeds context_window/);
  });

  it('the schema names bad weights, strategies, empty lists and unknown keys', () => {
    const doc = twoAccounts();
    doc.models[1].deployments[0].weight = 0;
    doc.models[1].deployments[1].region = 'eu';
    doc.models[1].routing.strategy = 'random';
    const message = errorOf(doc);
    expect(message).toMatch(/models\[1\] \(id "claude"\)\.deployments\[0\]\.weight must be > 0/);
    expect(message).toMatch(/models\[1\] \(id "claude"\)\.deployments\[1\] must NOT have additional properties: "region"/);
    expect(message).toMatch(/models\[1\] \(id "claude"\)\.routing\.strategy must be equal to one of the allowed values: "weighted", "least_in_flight", "lowest_latency"/);
    const empty = twoAccounts();
    empty.models[1].deployments = [];
    expect(errorOf(empty)).toMatch(/deployments must NOT have fewer than 1 items/);
  });
});

describe('buildCatalog: cooldowns', () => {
  it('a model\'s routing.cooldown_ms wins over the top-level routing.cooldown_ms; neither leaves the store\'s default', () => {
    const doc = minimal();
    expect(buildCatalog(doc, env).models.get('gpt')!.routing.cooldownMs).toBeUndefined();
    doc.routing = { cooldown_ms: 10_000 };
    doc.models[1].routing = { cooldown_ms: 120_000 };
    const c = buildCatalog(doc, env);
    expect(c.models.get('gpt')!.routing.cooldownMs).toBe(10_000);
    expect(c.models.get('claude')!.routing).toEqual({ strategy: 'weighted', sessionAffinity: true, cooldownMs: 120_000 });
  });

  it('refuses a cooldown that is not a positive whole number of ms, and unknown routing settings', () => {
    const doc = minimal();
    doc.routing = { cooldown_ms: 0 };
    expect(errorOf(doc)).toMatch(/routing\.cooldown_ms must be >= 1/);
    doc.routing = { cooldown: 5 };
    expect(errorOf(doc)).toMatch(/routing.*cooldown/);
    delete doc.routing;
    doc.models[0].routing = { cooldown_ms: 1.5 };
    expect(errorOf(doc)).toMatch(/models\[0\] \(id "gpt"\)\.routing\.cooldown_ms must be integer/);
  });
});
