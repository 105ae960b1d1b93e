import { loadConfigFile, type LoadOptions } from './load-config.js';
import { providers as builtInProviders } from '../providers/registry.js';
import type { ProviderConfig, ProviderRegistry } from '../providers/types.js';
import type { Catalog, ModelEntry } from '../routing/catalog.js';

/**
 * The catalog used when no config file is given: the models the registered kinds serve with no
 * config (`Provider.builtIn`: the in-process local models, which need no network), each with its
 * one deployment on its kind's own provider entry.
 */
export function defaultCatalog(registry: ProviderRegistry = builtInProviders): Catalog {
  const providers = new Map<string, ProviderConfig>();
  const models = new Map<string, ModelEntry>();
  const aliases = new Map<string, string>();
  for (const kind of Object.values(registry)) {
    if (!kind.builtIn) continue;
    const provider: ProviderConfig = { ...kind.builtIn.provider, type: kind.type };
    providers.set(provider.id, provider);
    for (const { upstreamModel, ...def } of kind.builtIn.models) {
      const deployment = { id: `${def.id}/0`, name: '0', provider, upstreamModel, weight: 1, price: def.price, maxOutputTokens: def.maxOutputTokens };
      models.set(def.id, { ...def, fallbackOnUnavailable: false, deployments: [deployment], routing: { strategy: 'weighted', sessionAffinity: true } });
      for (const alias of def.aliases) aliases.set(alias, def.id);
    }
  }
  return { providers, models, aliases };
}

/** The catalog the gateway serves: the config file when one is given (SWITCHYARD_CONFIG), else the built-in one. */
export function loadCatalog(configPath: string | undefined, opts: LoadOptions = {}): Catalog {
  return configPath ? loadConfigFile(configPath, process.env, opts) : defaultCatalog(opts.providers);
}

/** Which catalog `loadCatalog` reads, in words for messages. */
export function catalogSource(configPath: string | undefined): string {
  return configPath ? `the catalog in ${configPath} (SWITCHYARD_CONFIG)` : 'the built-in local catalog (SWITCHYARD_CONFIG is not set)';
}
