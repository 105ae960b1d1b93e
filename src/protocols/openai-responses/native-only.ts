import { RESPONSES_EXT, type DroppedFeature, type NativeOnly, type ResponsesRequestBag } from '../../ir/index.js';
import { isRecord } from '../shared/json.js';

/**
 * What of a Responses request only a Responses upstream that runs hosted tools takes, for the
 * pipeline's warnings elsewhere: hosted tools (a namespace tool's functions travel as IR functions,
 * `<namespace>__<name>`; only its other tools are lost) and the input items the IR has no form for
 * (hosted tool calls, custom tool calls, ...). Elsewhere they are dropped, never a 400.
 */
export function nativeOnlyOf(bag: ResponsesRequestBag): NativeOnly[] | undefined {
  const out: NativeOnly[] = [];
  const add = (feature: string, names: string[]) => out.push({ protocol: RESPONSES_EXT, serverTools: true, upstream: 'Responses-speaking', feature, names });
  const hosted = bag.hostedTools ?? [];
  const others = hosted.filter((t) => t.type !== 'namespace');
  if (others.length) add('hosted tools', distinct(others.map((t) => String(t.type))));
  const inNamespaces = hosted.filter((t) => t.type === 'namespace').flatMap(notFunctions);
  if (inNamespaces.length) add('namespace tools other than functions', inNamespaces);
  if (bag.otherItems?.length) add('input items', distinct(bag.otherItems.map((o) => String(o.item.type))));
  return out.length ? out : undefined;
}

/** `item_reference` ids with nothing stored to resolve them: no upstream gets them. */
export function droppedOf(references: string[]): DroppedFeature[] | undefined {
  return references.length ? [{ feature: 'item_reference', reason: 'no stored responses', names: references }] : undefined;
}

/** A namespace tool's tools other than functions, as `<namespace>.<name or type>`. */
function notFunctions(namespace: Record<string, unknown>): string[] {
  const tools: unknown[] = Array.isArray(namespace.tools) ? namespace.tools : [];
  return tools.filter((t) => !isRecord(t) || t.type !== 'function').map((t) => `${String(namespace.name)}.${String(isRecord(t) ? (t.name ?? t.type) : undefined)}`);
}

function distinct(names: string[]): string[] {
  return [...new Set(names)];
}
