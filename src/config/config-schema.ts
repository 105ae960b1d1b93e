/**
 * JSON schema of the catalog config file (YAML). The minimal form scripts rely on:
 *   providers: { <id>: { type: openai | anthropic, base_url, api_key_env } }
 *   models: [ { id, provider, upstream_model } ]
 * A model served in several places lists `deployments: [ { provider, upstream_model, ... } ]`
 * instead of its provider and upstream model, and may choose a `routing: { strategy }`. A top-level
 * `routing: { cooldown_ms }` sets every model's cooldown; a model's own `routing.cooldown_ms` wins.
 * Everything else is optional with defaults (see load-config.ts and config/example.yaml).
 */
import type { ProviderRegistry } from '../providers/types.js';

/** A rate: USD per million tokens, as a decimal string (exact) or a number. */
const rate = { type: ['string', 'number'] } as const;

const rates = {
  input: rate,
  output: rate,
  cache_read: rate,
  cache_write: rate,
  cache_write_1h: rate,
  reasoning: rate,
  input_audio: rate,
  input_image: rate,
  output_audio: rate,
  output_image: rate,
} as const;

/** Long-context tiers: above a prompt length, the whole request at their rates. */
const longContext = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['above'],
    properties: { above: { type: 'integer', minimum: 1 }, ...rates },
  },
} as const;

/** A service tier's prices: its own rates (and long-context tiers), or a multiple of the standard ones. */
const serviceTierPrice = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...rates,
    multiplier: rate,
    long_context: longContext,
  },
} as const;

/**
 * A price (docs/providers.md, "Prices"): rates per kind of token, long-context tiers (`above` a
 * prompt length, the whole request at their rates), per-use fees of server tools (USD per
 * thousand uses), and service tiers priced apart.
 */
const price = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...rates,
    long_context: longContext,
    server_tools: { type: 'object', additionalProperties: rate },
    service_tiers: { type: 'object', additionalProperties: serviceTierPrice },
  },
} as const;


/**
 * A provider's `options:` are its kind's own (`Provider.options.schema`): one if/then per kind
 * that declares some, and none allowed on the others.
 */
function providerOptionRules(registry: ProviderRegistry) {
  return Object.values(registry).map((p) => ({
    if: { properties: { type: { const: p.type } }, required: ['type'] },
    then: p.options?.schema ? { properties: { options: p.options.schema } } : { not: { required: ['options'] } },
  }));
}

/**
 * The fields the registered kinds declare on provider entries, model entries or a model's `fast:`
 * (`Provider.options`): every kind's, so a model served by several kinds may carry each one's.
 */
export function declaredFields(registry: ProviderRegistry, which: 'fields' | 'modelFields' | 'fastFields'): Record<string, Record<string, unknown>> {
  return Object.assign({}, ...Object.values(registry).map((p) => p.options?.[which] ?? {}));
}

const deployment = {
  type: 'object',
  additionalProperties: false,
  required: ['provider', 'upstream_model'],
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$' },
    provider: { type: 'string' },
    upstream_model: { type: 'string', minLength: 1 },
    weight: { type: 'number', exclusiveMinimum: 0 },
    price,
    max_output_tokens: { type: 'integer', minimum: 1 },
  },
} as const;

const routing = {
  type: 'object',
  additionalProperties: false,
  properties: {
    strategy: { enum: ['weighted', 'least_in_flight', 'lowest_latency'] },
    session_affinity: { type: 'boolean' },
    cooldown_ms: { type: 'integer', minimum: 1, maximum: 86_400_000 },
  },
} as const;

/** Top-level `routing:`: defaults for every model (a model's own `routing:` wins). */
const routingDefaults = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** How long repeated failures cool a deployment down (spec/DECISIONS.md, "Deployment health"). */
    cooldown_ms: { type: 'integer', minimum: 1, maximum: 86_400_000 },
  },
} as const;

/** The schema for a registry of provider kinds (a provider's `type` must be one of its keys). */
export const configSchema = (registry: ProviderRegistry) => ({
  type: 'object',
  additionalProperties: false,
  required: ['providers', 'models'],
  properties: {
    routing: routingDefaults,
    /** Sign-in with an identity provider: checked by identity.ts's own schema. */
    oidc: { type: 'object' },
    providers: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['type'],
        allOf: providerOptionRules(registry),
        properties: {
          type: { enum: Object.keys(registry) },
          options: { type: 'object' },
          base_url: { type: 'string', pattern: '^https?://' },
          api_key_env: { type: 'string', minLength: 1 },
          headers: { type: 'object', additionalProperties: { type: 'string' } },
          timeouts: {
            type: 'object',
            additionalProperties: false,
            properties: {
              connect_ms: { type: 'integer', minimum: 1 },
              first_byte_ms: { type: 'integer', minimum: 1 },
              idle_ms: { type: 'integer', minimum: 1 },
              response_ms: { type: 'integer', minimum: 1 },
            },
          },
          max_retries: { type: 'integer', minimum: 0, maximum: 10 },
          ...declaredFields(registry, 'fields'),
        },
      },
    },
    models: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id'],
        properties: {
          id: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:/-]*$' },
          /** With upstream_model: the model's one deployment. Either both, or `deployments`. */
          provider: { type: 'string' },
          upstream_model: { type: 'string', minLength: 1 },
          deployments: { type: 'array', minItems: 1, items: deployment },
          routing,
          display_name: { type: 'string' },
          price,
          /** Served without a price on purpose (a local server); otherwise a model must have a known price. */
          free: { type: 'boolean' },
          context_window: { type: 'integer', minimum: 1 },
          max_output_tokens: { type: 'integer', minimum: 1 },
          capabilities: {
            type: 'object',
            additionalProperties: false,
            properties: { tools: { type: 'boolean' }, reasoning: { type: 'boolean' }, images: { type: 'boolean' } },
          },
          fast: {
            type: 'object',
            additionalProperties: false,
            properties: {
              model: { type: 'string' },
              ...declaredFields(registry, 'fastFields'),
              price,
            },
          },
          fallbacks: { type: 'array', items: { type: 'string' } },
          fallback_on_unavailable: { type: 'boolean' },
          aliases: { type: 'array', items: { type: 'string' } },
          patterns: { type: 'array', items: { type: 'string', minLength: 1 } },
          created: { type: 'integer', minimum: 0 },
          ...declaredFields(registry, 'modelFields'),
          hidden: { type: 'boolean' },
        },
      },
    },
  },
}) as const;
