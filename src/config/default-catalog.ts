import { defaultLocalCatalog } from './local-models.js';
import { loadConfigFile, type LoadOptions } from './load-config.js';
import type { ProviderConfig } from '../providers/types.js';
import type { Catalog, ModelEntry } from '../routing/catalog.js';

export const LOCAL_PROVIDER: ProviderConfig = {
  id: 'local',
  type: 'local',
  baseUrl: 'local://',
  headers: {},
  timeouts: { connectMs: 1_000, firstByteMs: 60_000, idleMs: 60_000, responseMs: 600_000 },
  maxRetries: 0,
};

/** The catalog used when no config file is given: in-process models that need no network. */
export function defaultCatalog(): Catalog {
  const models = new Map<string, ModelEntry>();
  const aliases = new Map<string, string>();
  for (const { upstreamModel, ...def } of defaultLocalCatalog()) {
    const deployment = { id: `${def.id}/0`, name: '0', provider: LOCAL_PROVIDER, upstreamModel, weight: 1, price: def.price, maxOutputTokens: def.maxOutputTokens };
    models.set(def.id, { ...def, deployments: [deployment], routing: { strategy: 'weighted', sessionAffinity: true } });
    for (const alias of def.aliases) aliases.set(alias, def.id);
  }
  return { providers: new Map([[LOCAL_PROVIDER.id, LOCAL_PROVIDER]]), models, aliases };
}

/** The catalog the gateway serves: the config file when one is given (SWITCHYARD_CONFIG), else the built-in one. */
export function loadCatalog(configPath: string | undefined, opts: LoadOptions = {}): Catalog {
  return configPath ? loadConfigFile(configPath, process.env, opts) : defaultCatalog();
}

/** Which catalog `loadCatalog` reads, in words for messages. */
export function catalogSource(configPath: string | undefined): string {
  return configPath ? `the catalog in ${configPath} (SWITCHYARD_CONFIG)` : 'the built-in local catalog (SWITCHYARD_CONFIG is not set)';
}
