import { defaultLocalCatalog } from './local-models.js';
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
  for (const def of defaultLocalCatalog()) {
    models.set(def.id, { ...def, provider: LOCAL_PROVIDER.id });
    for (const alias of def.aliases) aliases.set(alias, def.id);
  }
  return { providers: new Map([[LOCAL_PROVIDER.id, LOCAL_PROVIDER]]), models, aliases };
}
