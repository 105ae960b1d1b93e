import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { providers as builtInProviders } from '../providers/registry.js';
import type { Provider, ProviderConfig, ProviderRegistry } from '../providers/types.js';
import { globRegex, type Catalog, type Deployment, type ModelEntry, type ModelPattern, type Price } from '../routing/catalog.js';
import { configSchema, declaredFields } from './config-schema.js';
import { ConfigError } from './config-error.js';
import { buildIdentityConfig, type IdentityConfig } from './identity.js';
import { buildPrice, freePrice, parseConfigPrice } from './build-price.js';
import { documentedRules } from './price-rules.js';
import { priceTableVersion, tablePrice } from './price-table.js';

export { ConfigError };

const DEFAULT_TIMEOUTS = { connectMs: 10_000, firstByteMs: 120_000, idleMs: 120_000, responseMs: 600_000 };
type Raw = Record<string, any>;

/** One compiled validator per registry (a provider's `type` must be one of its keys). */
const validators = new WeakMap<ProviderRegistry, ReturnType<Ajv['compile']>>();
function validatorFor(registry: ProviderRegistry) {
  let v = validators.get(registry);
  if (!v) validators.set(registry, (v = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(configSchema(registry))));
  return v;
}

export interface LoadOptions {
  /**
   * `optional` leaves a provider whose api_key_env is unset without a key, for a catalog read
   * only for its model names (the admin CLI); the gateway needs them.
   */
  providerKeys?: 'required' | 'optional';
  /** The providers a config may name (`type`); the built-in ones by default. */
  providers?: ProviderRegistry;
}

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env, opts: LoadOptions = {}): Catalog {
  return buildCatalog(readConfigDocument(path), env, path, opts);
}

/**
 * Sign-in with the organisation's identity provider: the file's `oidc:` section (when a file is
 * given) with the SWITCHYARD_OIDC_* variables over it; undefined when no issuer is named.
 */
export function loadIdentityConfig(path: string | undefined, env: NodeJS.ProcessEnv = process.env): IdentityConfig | undefined {
  const doc = path ? (readConfigDocument(path) as Raw | null) : undefined;
  return buildIdentityConfig(doc?.oidc ?? undefined, env, path ?? 'environment');
}

function readConfigDocument(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config ${path}: ${(e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ConfigError(`config ${path} is not valid YAML: ${(e as Error).message}`);
  }
  return raw;
}

/** Validates a parsed config document and turns it into a catalog. */
export function buildCatalog(raw: unknown, env: NodeJS.ProcessEnv, source = 'config', opts: LoadOptions = {}): Catalog {
  const registry = opts.providers ?? builtInProviders;
  const validate = validatorFor(registry);
  if (!validate(raw)) {
    const problems = (validate.errors ?? []).map((e) => `${describePath(raw, e.instancePath)} ${e.message}${detailOf(e)}`);
    throw new ConfigError(`${source} is invalid:\n  ${problems.join('\n  ')}`);
  }
  const doc = raw as Raw;
  const providers = new Map<string, ProviderConfig>();
  for (const [id, p] of Object.entries(doc.providers as Record<string, Raw>)) {
    providers.set(id, buildProvider(id, p, registry, env, source, opts));
  }
  const models = new Map<string, ModelEntry>();
  for (const [i, m] of (doc.models as Raw[]).entries()) {
    const where = `${source}: models[${i}] (id "${m.id}")`;
    if (models.has(m.id)) throw new ConfigError(`${where}: duplicate model id`);
    models.set(m.id, buildModel(m, providers, where, doc.routing, registry));
  }
  refuseUnpriced([...models.values()], source);
  const aliases = new Map<string, string>();
  for (const m of models.values()) {
    for (const alias of m.aliases) {
      if (models.has(alias) || aliases.has(alias)) throw new ConfigError(`${source}: alias "${alias}" of model "${m.id}" is already taken`);
      aliases.set(alias, m.id);
    }
  }
  for (const m of models.values()) checkReferences(m, models, source);
  return { providers, models, aliases, patterns: buildPatterns(models, source) };
}

/**
 * Every model's name patterns, most specific first (the most characters besides `*`), so that
 * `claude-*haiku*` wins over `claude-*` wherever each is written; equals keep the file's order.
 */
function buildPatterns(models: Map<string, ModelEntry>, source: string): ModelPattern[] {
  const out: ModelPattern[] = [];
  for (const m of models.values()) {
    for (const glob of m.patterns ?? []) {
      const where = `${source}: pattern "${glob}" of model "${m.id}"`;
      if (!glob.includes('*')) throw new ConfigError(`${where} has no *: an exact name is an alias (aliases)`);
      const taken = out.find((p) => p.glob === glob);
      if (taken) throw new ConfigError(`${where} is already a pattern of model "${taken.modelId}"`);
      out.push({ glob, modelId: m.id, regex: globRegex(glob) });
    }
  }
  const literal = (p: ModelPattern) => p.glob.replaceAll('*', '').length;
  return out.sort((a, b) => literal(b) - literal(a));
}

function buildProvider(id: string, p: Raw, registry: ProviderRegistry, env: NodeJS.ProcessEnv, source: string, opts: LoadOptions): ProviderConfig {
  const where = `${source}: providers.${id}`;
  let apiKey: string | undefined;
  if (p.api_key_env) {
    apiKey = env[p.api_key_env];
    if (!apiKey && opts.providerKeys !== 'optional') throw new ConfigError(`${where}: environment variable ${p.api_key_env} (api_key_env) is not set`);
  }
  return {
    id,
    type: p.type as string,
    baseUrl: (p.base_url ?? registry[p.type].defaultBaseUrl).replace(/\/+$/, ''),
    apiKey,
    headers: p.headers ?? {},
    timeouts: {
      connectMs: p.timeouts?.connect_ms ?? DEFAULT_TIMEOUTS.connectMs,
      firstByteMs: p.timeouts?.first_byte_ms ?? DEFAULT_TIMEOUTS.firstByteMs,
      idleMs: p.timeouts?.idle_ms ?? DEFAULT_TIMEOUTS.idleMs,
      responseMs: p.timeouts?.response_ms ?? DEFAULT_TIMEOUTS.responseMs,
    },
    maxRetries: p.max_retries ?? 2,
    options: buildOptions(registry[p.type], { ...pick(p, registry[p.type].options?.fields), ...(p.options ?? {}) }, env, where),
  };
}

/** The fields of `raw` that `declared` names (a kind's fields written outside `options:`), or none. */
function pick(raw: Raw, declared: Record<string, unknown> | undefined): Raw {
  return Object.fromEntries(Object.keys(declared ?? {}).filter((k) => raw[k] !== undefined).map((k) => [k, raw[k]]));
}

function buildOptions(provider: Provider, raw: Raw, env: NodeJS.ProcessEnv, where: string): Record<string, unknown> {
  if (!provider.options?.build) return raw;
  try {
    return provider.options.build(raw, env);
  } catch (e) {
    throw new ConfigError(`${where}.options: ${(e as Error).message}`);
  }
}

/** A configured `price:` for a model served by `d` (its provider's documented rules complete it). */
function configuredPrice(p: Raw, d: Pick<RawDeployment, 'provider' | 'upstream_model'>, where: string): Price {
  try {
    return buildPrice(parseConfigPrice(p, `${where}: price`), documentedRules(d.provider.type, d.provider.baseUrl, d.upstream_model));
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}

/** A deployment's price and where it came from (`switchyard prices` shows it). */
interface KnownPrice {
  price: Price;
  source: string;
  contextWindow?: number;
}

/**
 * A deployment's price: its own configured one, else its model's configured one; `free: true`
 * says that none is wanted; else the built-in model's its provider kind serves under that upstream
 * model (the local models: `Provider.builtIn`), else the price table's for its upstream model at its provider's URL. Undefined: nothing is known (refused by
 * refuseUnpriced).
 */
function knownPrice(m: Raw, d: RawDeployment, where: string, registry: ProviderRegistry): KnownPrice | undefined {
  // A price that cannot be read is reported first, whatever else is wrong with the model.
  const own = d.price ? configuredPrice(d.price, d, d.where) : undefined;
  const model = m.price ? configuredPrice(m.price, d, where) : undefined;
  if (model && m.free) throw new ConfigError(`${where}: a model with a price cannot be free: true`);
  if (own && m.free) throw new ConfigError(`${d.where}: a deployment with a price cannot be on a model with free: true`);
  if (own) return { price: own, source: 'config (deployment)' };
  if (model) return { price: model, source: 'config' };
  if (m.free) return { price: freePrice(), source: 'free' };
  const builtIn = registry[d.provider.type]?.builtIn;
  if (builtIn) {
    const own = builtIn.models.find((b) => b.upstreamModel === d.upstream_model);
    return own && { price: own.price, source: 'built-in local model' };
  }
  const t = tablePrice(d.provider.baseUrl, d.upstream_model, d.provider.type);
  return t && { price: t.price, source: `price table ${priceTableVersion()} (${t.source})`, ...(t.contextWindow ? { contextWindow: t.contextWindow } : {}) };
}

/** A model that would bill nothing without saying so stops the start, every such deployment named. */
function refuseUnpriced(models: ModelEntry[], source: string): void {
  const lines = models.flatMap((m) =>
    m.deployments
      .filter((d) => d.price === UNPRICED)
      .map((d) => {
        const named = m.deployments.length > 1 ? ` deployment "${d.name}"` : '';
        return `model "${m.id}"${named} (upstream model "${d.upstreamModel}" at ${d.provider.baseUrl})`;
      }),
  );
  if (lines.length === 0) return;
  throw new ConfigError(
    `${source}: no price is known for ${lines.length === 1 ? 'this model' : 'these models'}:\n  ${lines.join('\n  ')}\n` +
      'Neither the config nor the price table (@pydantic/genai-prices, matched by upstream model and provider URL) has a price, ' +
      'and an unpriced model would be served for nothing. Give each a price: { input, output } (USD per million tokens), ' +
      'or free: true if it costs nothing (a local server).',
  );
}

/** Marks a deployment left without a price until refuseUnpriced reports every such one at once. */
const UNPRICED: Price = Object.freeze(freePrice());

/** A deployment as configured, its provider resolved; `where` names it in messages. */
interface RawDeployment {
  name: string;
  provider: ProviderConfig;
  upstream_model: string;
  weight: number;
  price?: Raw;
  max_output_tokens?: number;
  where: string;
}

/**
 * A model's deployments as configured: its `deployments:` list, or the one its `provider` and
 * `upstream_model` name (named "0", so a model moved to a list keeps its first deployment's id).
 */
function rawDeployments(m: Raw, providers: Map<string, ProviderConfig>, where: string): RawDeployment[] {
  const providerOf = (id: string, at: string) => {
    const p = providers.get(id);
    if (!p) throw new ConfigError(`${at}: provider "${id}" is not declared under providers`);
    return p;
  };
  if (!m.deployments) {
    if (m.provider === undefined || m.upstream_model === undefined) {
      throw new ConfigError(`${where}: a model needs provider and upstream_model, or a list of deployments`);
    }
    return [{ name: '0', provider: providerOf(m.provider, where), upstream_model: m.upstream_model, weight: 1, where }];
  }
  if (m.provider !== undefined || m.upstream_model !== undefined) {
    throw new ConfigError(`${where}: a model with deployments names its provider and upstream_model in each deployment, not beside them`);
  }
  const names = new Set<string>();
  return (m.deployments as Raw[]).map((d, j) => {
    const name: string = d.name ?? String(j);
    const at = `${where}.deployments[${j}] (name "${name}")`;
    if (names.has(name)) throw new ConfigError(`${at}: duplicate deployment name`);
    names.add(name);
    return { name, provider: providerOf(d.provider, at), upstream_model: d.upstream_model, weight: d.weight ?? 1, price: d.price, max_output_tokens: d.max_output_tokens, where: at };
  });
}

function buildModel(m: Raw, providers: Map<string, ProviderConfig>, where: string, defaults: Raw | undefined, registry: ProviderRegistry): ModelEntry {
  const raws = rawDeployments(m, providers, where);
  const known = raws.map((d) => knownPrice(m, d, where, registry));
  // No invented maximum: an agent's default (Claude Code asks for 32000) must reach the upstream.
  const maxOutputTokens: number | undefined = m.max_output_tokens;
  const contextWindow = m.context_window ?? known[0]?.contextWindow ?? 200_000;
  const deployments: Deployment[] = raws.map((d, j) => {
    const max: number | undefined = d.max_output_tokens ?? maxOutputTokens;
    if (max !== undefined && max > contextWindow) throw new ConfigError(`${d.where}: max_output_tokens exceeds context_window`);
    return {
      id: `${m.id}/${d.name}`,
      name: d.name,
      provider: d.provider,
      upstreamModel: d.upstream_model,
      weight: d.weight,
      price: known[j]?.price ?? UNPRICED,
      priceSource: known[j]?.source ?? 'none',
      ...(max !== undefined ? { maxOutputTokens: max } : {}),
    };
  });
  const fastFields = declaredFields(registry, 'fastFields');
  const fastSettings = m.fast ? pick(m.fast, fastFields) : {};
  const fast = m.fast
    ? {
        model: m.fast.model,
        ...(Object.keys(fastSettings).length > 0 ? { options: fastSettings } : {}),
        price: m.fast.price ? configuredPrice(m.fast.price, raws[0], `${where} fast`) : undefined,
      }
    : undefined;
  if (fast && !fast.model && !fast.options) {
    throw new ConfigError(`${where}: fast needs one of ${['model', ...Object.keys(fastFields)].join(', ').replace(/, ([^,]*)$/, ' or $1')}`);
  }
  const modelOptions = pick(m, declaredFields(registry, 'modelFields'));
  return {
    id: m.id,
    displayName: m.display_name ?? m.id,
    deployments,
    routing: {
      strategy: m.routing?.strategy ?? 'weighted',
      sessionAffinity: m.routing?.session_affinity ?? true,
      ...(m.routing?.cooldown_ms ?? defaults?.cooldown_ms ? { cooldownMs: m.routing?.cooldown_ms ?? defaults?.cooldown_ms } : {}),
    },
    price: m.price ? configuredPrice(m.price, raws[0], where) : deployments[0].price,
    contextWindow,
    maxOutputTokens,
    capabilities: { tools: true, reasoning: false, images: true, ...(m.capabilities ?? {}) },
    fast,
    fallbacks: m.fallbacks ?? [],
    fallbackOnUnavailable: m.fallback_on_unavailable ?? false,
    aliases: m.aliases ?? [],
    ...(m.patterns ? { patterns: m.patterns } : {}),
    created: m.created ?? 0,
    ...(Object.keys(modelOptions).length > 0 ? { modelOptions } : {}),
    hidden: m.hidden ?? false,
  };
}

function checkReferences(m: ModelEntry, models: Map<string, ModelEntry>, source: string): void {
  const where = `${source}: model "${m.id}"`;
  for (const f of m.fallbacks) {
    if (!models.has(f)) throw new ConfigError(`${where}: fallback "${f}" is not a model in the catalog`);
    if (f === m.id) throw new ConfigError(`${where}: a model cannot fall back to itself`);
  }
  if (m.fast?.model && !models.has(m.fast.model)) {
    throw new ConfigError(`${where}: fast.model "${m.fast.model}" is not a model in the catalog`);
  }
}

/** What AJV's message leaves out: the unknown key, or the values allowed. */
function detailOf(e: { keyword: string; params: Record<string, unknown> }): string {
  if (e.keyword === 'additionalProperties') return `: "${String(e.params.additionalProperty)}"`;
  if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) return `: ${e.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return '';
}

/** `/models/2/provider` -> `models[2] (id "x").provider`, so the message names the entry. */
function describePath(raw: unknown, pointer: string): string {
  const parts = pointer.split('/').filter(Boolean);
  let node: any = raw;
  let out = '';
  for (const part of parts) {
    node = node?.[part];
    if (/^\d+$/.test(part)) {
      out += `[${part}]`;
      if (node && typeof node === 'object' && typeof node.id === 'string') out += ` (id "${node.id}")`;
    } else {
      out += out ? `.${part}` : part;
    }
  }
  return out || '(root)';
}
