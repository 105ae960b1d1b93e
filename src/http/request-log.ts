import { inputTotal } from '../ir/index.js';
import type { KeyAuth } from '../ledger/index.js';
import type { CompletionReport } from '../handlers/types.js';

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
