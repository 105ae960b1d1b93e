import type { Request } from '../ir/index.js';
import type { ProviderType } from '../providers/types.js';

/** The Responses protocol's ext key (its hosted tools and untranslatable items wait there). */
const RESPONSES = 'openai-responses';

/**
 * What of a request the chosen upstream will not see, as warnings for the log and the
 * `x-switchyard-warnings` header. Hosted tools (web_search, namespace, mcp, ...) and hosted tool
 * call items only reach a Responses-speaking upstream; elsewhere they are dropped, never a 400.
 * JSON mode without a schema has no Anthropic form and is dropped the same way.
 */
export function droppedFeatures(req: Request, provider: ProviderType): string[] {
  const out: string[] = [];
  if (req.responseFormat?.type === 'json_object' && provider === 'anthropic') {
    out.push('JSON mode dropped (Anthropic has structured output only with a schema: use json_schema)');
  }
  const ext = req.ext[RESPONSES];
  if (!ext) return out;
  const refs = ext.droppedReferences;
  if (Array.isArray(refs) && refs.length > 0) {
    out.push(`item_reference dropped (no stored responses): ${refs.join(', ')}`);
  }
  if (provider === RESPONSES) return out;
  const hosted = ext.hostedTools;
  if (Array.isArray(hosted) && hosted.length > 0) {
    const types = [...new Set(hosted.map((t) => String((t as { type?: unknown }).type)))];
    out.push(`hosted tools dropped (the upstream is not Responses-speaking): ${types.join(', ')}`);
  }
  const items = ext.otherItems;
  if (Array.isArray(items) && items.length > 0) {
    const types = [...new Set(items.map((i) => String((i as { item?: { type?: unknown } }).item?.type)))];
    out.push(`input items dropped (the upstream is not Responses-speaking): ${types.join(', ')}`);
  }
  return out;
}
