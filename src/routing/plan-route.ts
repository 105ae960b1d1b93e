import { GatewayError, type Request } from '../ir/index.js';
import type { Target } from '../providers/types.js';
import { findModel, type Catalog, type Deployment, type ModelEntry, type Price } from './catalog.js';

/**
 * One model the pipeline may try, fully resolved for one of its deployments (the first, as
 * planned; the pipeline moves it to the one it picks with `onDeployment`).
 */
export interface Candidate {
  model: ModelEntry;
  deployment: Deployment;
  target: Target;
  price: Price;
  variant: 'standard' | 'fast';
  /** The fast variant served as settings of the same upstream model (priced at the fast price). */
  byOptions?: boolean;
  /** The output ceiling for this candidate (the request's, clamped to the model's maximum). */
  maxTokens: number;
}

/**
 * Turns a request into the ordered list of candidates: the requested model (its fast variant when
 * asked for and available), then its fallbacks. Fails before anything runs on an unknown model
 * or an unknown fallback. A ceiling above a model's maximum is clamped, not refused (see
 * `ceilingWarning`): agents send their own defaults (Claude Code 32000) and must not break.
 *
 * A key restricted to `allowed` models gets a 403 for any other model it names (as the model or
 * a fallback); a default fallback or fast variant it may not use is skipped, as if absent.
 */
export function planRoute(catalog: Catalog, req: Request, allowed?: ReadonlySet<string>): Candidate[] {
  const primary = requestedModel(catalog, req.model, allowed);
  const chain = fallbackChain(catalog, primary, req, allowed);
  const seen = new Set<string>();
  const candidates: Candidate[] = [];
  for (const model of [primary, ...chain]) {
    const c = candidateFor(catalog, model, req, allowed);
    if (seen.has(c.model.id)) continue;
    seen.add(c.model.id);
    candidates.push(c);
  }
  return candidates;
}

function fallbackChain(catalog: Catalog, primary: ModelEntry, req: Request, allowed: ReadonlySet<string> | undefined): ModelEntry[] {
  if (req.fallbacks === 'default') return primary.fallbacks.filter((id) => mayUse(allowed, id)).map((id) => catalog.models.get(id)!);
  return req.fallbacks.map((id, i) => {
    const m = findModel(catalog, id);
    if (!m) throw new GatewayError('invalid_request', `fallbacks[${i}]: model "${id}" is not in the catalog`, { param: `fallbacks.${i}` });
    if (!mayUse(allowed, m.id)) throw modelNotAllowed(m.id, `fallbacks.${i}`);
    return m;
  });
}

/**
 * The model a request names (an id or an alias): a 404 when the catalog has no such model, a 403
 * when the key is restricted to `allowed` models and this is not one of them.
 */
export function requestedModel(catalog: Catalog, idOrAlias: string, allowed: ReadonlySet<string> | undefined): ModelEntry {
  const model = findModel(catalog, idOrAlias);
  if (!model) {
    throw new GatewayError('not_found', `model "${idOrAlias}" is not in the catalog (GET /v1/models lists the models)`, {
      param: 'model',
      code: 'model_not_found',
    });
  }
  if (!mayUse(allowed, model.id)) throw modelNotAllowed(model.id, 'model');
  return model;
}

/**
 * Catalog model ids for a list of ids or aliases (a key's allowed models), each once, in order.
 * An unknown one is a 400 naming its place in the list (`${param}[i]`).
 */
export function catalogModelIds(catalog: Catalog, idsOrAliases: string[], param: string): string[] {
  const ids = idsOrAliases.map((id, i) => {
    const m = findModel(catalog, id);
    if (!m) throw new GatewayError('invalid_request', `model "${id}" is not in the catalog`, { param: `${param}[${i}]` });
    return m.id;
  });
  return [...new Set(ids)];
}

/** Whether a key restricted to `allowed` (undefined: not restricted) may use the model. */
export function mayUse(allowed: ReadonlySet<string> | undefined, modelId: string): boolean {
  return allowed === undefined || allowed.has(modelId);
}

/** The 403 for a model the key may not use. */
export function modelNotAllowed(modelId: string, param: string): GatewayError {
  return new GatewayError('permission', `this API key may not use model "${modelId}"`, { param, code: 'model_not_allowed' });
}

/** Applies the fast preference: another catalog model, or provider options on the same one. */
function candidateFor(catalog: Catalog, model: ModelEntry, req: Request, allowed: ReadonlySet<string> | undefined): Candidate {
  let served = model;
  let variant: Candidate['variant'] = 'standard';
  let byOptions = false;
  if (req.fast && model.fast && (!model.fast.model || mayUse(allowed, model.fast.model))) {
    variant = 'fast';
    if (model.fast.model) served = catalog.models.get(model.fast.model)!;
    else byOptions = true;
  }
  const modelOptions = byOptions ? { ...model.modelOptions, ...model.fast?.options } : served.modelOptions;
  return onDeployment({ model: served, variant, byOptions, target: modelOptions ? { modelOptions } : {} }, served.deployments[0], req);
}

/**
 * What a candidate is apart from its deployment: the model served, and how (`byOptions`: the fast
 * variant as settings of the same upstream model, which the target's `modelOptions` carry).
 */
type ServedModel = Pick<Candidate, 'model' | 'variant' | 'byOptions'> & { target: Pick<Target, 'modelOptions'> };

/**
 * The candidate served by deployment `d` of its model: the deployment's provider, upstream
 * model, ceiling and price (a fast variant served by provider options keeps its own price).
 */
export function onDeployment(cand: ServedModel, d: Deployment, req: Request): Candidate {
  return {
    model: cand.model,
    deployment: d,
    variant: cand.variant,
    ...(cand.byOptions ? { byOptions: true } : {}),
    price: (cand.byOptions ? cand.model.fast?.price : undefined) ?? d.price,
    maxTokens: Math.min(req.maxTokens, d.maxOutputTokens ?? req.maxTokens),
    target: {
      provider: d.provider,
      modelId: cand.model.id,
      upstreamModel: d.upstreamModel,
      ...(cand.target.modelOptions ? { modelOptions: cand.target.modelOptions } : {}),
    },
  };
}

/**
 * What the hold must cover for a candidate: one of its deployments serves it (a hop to another
 * before any output costs nothing), so the largest ceiling at the highest of their prices.
 */
export function holdCandidate(cand: Candidate, req: Request): { maxTokens: number; price: Price[] } {
  const each = cand.model.deployments.map((d) => onDeployment(cand, d, req));
  return { maxTokens: Math.max(...each.map((c) => c.maxTokens)), price: each.map((c) => c.price) };
}

/**
 * The warning for a client's ceiling lowered to the candidate's maximum; none when the client
 * named no ceiling (the protocol's default is lowered silently, as the spec says).
 */
export function ceilingWarning(req: Request, cand: Candidate): string | undefined {
  if (req.maxTokensDefaulted || cand.maxTokens >= req.maxTokens) return undefined;
  const param = req.maxTokensParam ?? 'max_tokens';
  return `${param} ${req.maxTokens} lowered to ${cand.maxTokens}, the maximum output of model ${cand.model.id}`;
}
