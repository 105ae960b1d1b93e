import { inputTotal } from '../ir/index.js';
import type { KeyAuth } from '../ledger/index.js';
import type { CompletionReport } from '../handlers/types.js';
import type { Attributes } from '../telemetry/types.js';

export interface RequestFacts {
  requestId: string;
  method: string;
  path: string;
  status: number;
  latencyMs: number;
  auth?: KeyAuth;
  completion: CompletionReport;
}

/**
 * The one log line of a request: who, what, how it went, what it cost. Never message content,
 * never a credential (the key appears by its id only); the path is logged without its query.
 */
export function requestLogLine(f: RequestFacts): Record<string, unknown> {
  const line: Record<string, unknown> = {
    requestId: f.requestId,
    method: f.method,
    path: f.path,
    status: f.status,
    latencyMs: Math.round(f.latencyMs),
  };
  if (f.auth) {
    line.account = f.auth.accountId;
    line.keyId = f.auth.keyId;
  }
  const { model, stream, run } = f.completion;
  if (model !== undefined) line.model = model;
  if (stream !== undefined) line.stream = stream;
  if (run) {
    line.served = run.servedModel ?? null;
    line.attempts = run.attempts.length;
    line.inputTokens = run.usage ? inputTotal(run.usage) : run.inputTokens;
    line.outputTokens = run.usage?.output.total ?? 0;
    line.costNd = run.cost.toString();
    // How the run ended: ok, refused, error, or cancelled (the client left, or the drain ended it).
    line.ended = run.status ?? 'running';
  }
  return line;
}

/**
 * The request span's own attributes, from the same facts as its log line: who called (account,
 * key), what was asked and who answered, the tokens and cost billed, and whether it fell back.
 */
export function requestSpanAttributes(f: RequestFacts): Attributes {
  const attrs: Attributes = { 'switchyard.request.id': f.requestId, 'url.path': f.path };
  if (f.auth) {
    attrs['switchyard.account.id'] = f.auth.accountId;
    attrs['switchyard.key.id'] = f.auth.keyId;
    attrs['switchyard.user.id'] = f.auth.user?.id;
  }
  const { model, stream, run } = f.completion;
  if (model !== undefined) {
    attrs['gen_ai.operation.name'] = 'chat';
    attrs['gen_ai.request.model'] = model;
    attrs['gen_ai.request.stream'] = stream;
  }
  if (run) {
    attrs['gen_ai.response.model'] = run.servedModel;
    attrs['switchyard.attempts'] = run.attempts.length;
    attrs['switchyard.fallback'] = run.attempts.some((a) => a.model !== run.attempts[0].model);
    attrs['switchyard.outcome'] = run.status ?? 'running';
    if (run.usage) {
      attrs['gen_ai.usage.input_tokens'] = inputTotal(run.usage);
      attrs['gen_ai.usage.output_tokens'] = run.usage.output.total;
      attrs['gen_ai.usage.cache_read.input_tokens'] = run.usage.input.cacheRead;
      attrs['gen_ai.usage.cache_creation.input_tokens'] = run.usage.input.cacheWrite;
    }
    attrs['switchyard.cost.nanodollars'] = Number(run.cost);
  }
  return attrs;
}
