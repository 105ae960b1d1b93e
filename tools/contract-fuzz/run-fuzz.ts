/**
 * Runs the property for one operation: valid requests, then invalid ones, each checked by
 * checkResponse; fast-check shrinks a failure to a small request, printed like a curl command.
 */
import fc from 'fast-check';
import { validRequest, type FuzzContext, type FuzzRequest } from './build-requests.js';
import { checkResponse, type OfficialChecks } from './check-response.js';
import type { Operation } from './load-contract.js';
import { invalidRequest } from './mutate-request.js';
import type { FuzzReport } from './report.js';
import { encodeBody, sendRequest } from './send-request.js';

export interface FuzzRun {
  ctx: FuzzContext;
  baseUrl: string;
  report: FuzzReport;
  official?: OfficialChecks;
  /** Deadline of one request including its whole stream (a hang fails the case). */
  timeoutMs: number;
  bodyLimitBytes: number;
  seed?: number;
}

/** A compact, replayable description (bodies longer than 300 characters are elided in the middle). */
export function describeRequest(req: FuzzRequest): string {
  const bytes = encodeBody(req);
  let body = bytes ? Buffer.from(bytes).toString('utf8') : '';
  if (body.length > 300) body = `${body.slice(0, 200)}…(${body.length} chars)…${body.slice(-60)}`;
  const headers = Object.entries(req.headers).map(([k, v]) => `-H '${k}: ${v}'`).join(' ');
  return `[${req.kind}] ${req.method} ${req.path} ${headers}${body ? ` --data '${body}'` : ''}`;
}

function printable(arb: fc.Arbitrary<FuzzRequest>): fc.Arbitrary<FuzzRequest> {
  return arb.map((req) => Object.assign(req, { [fc.toStringMethod]: () => describeRequest(req) }));
}

async function check(run: FuzzRun, op: Operation, req: FuzzRequest): Promise<void> {
  const res = await sendRequest(run.baseUrl, req, run.timeoutMs);
  run.report.record(op.operationId, req.kind === 'valid' ? 'valid' : 'invalid', res.status, req.kind);
  if (req.kind === 'valid' && res.status >= 400) run.report.refusal(op.operationId, errorMessage(res.text));
  const problems = checkResponse(run.ctx.contract, op, req, res, run.official);
  if (problems.length) throw new Error(`${problems.slice(0, 6).join('\n')}\nrequest: ${describeRequest(req)}`);
}

export async function fuzzOperation(run: FuzzRun, op: Operation, runs: { valid: number; invalid: number }): Promise<void> {
  const valid = validRequest(run.ctx, op);
  const params = { seed: run.seed, endOnFailure: false, verbose: 1 } as const;
  await fc.assert(fc.asyncProperty(printable(valid), (req) => check(run, op, req)), { ...params, numRuns: runs.valid });
  const invalid = invalidRequest(run.ctx, op, valid, { bodyLimitBytes: run.bodyLimitBytes });
  await fc.assert(fc.asyncProperty(printable(invalid), (req) => check(run, op, req)), { ...params, numRuns: runs.invalid });
}

function errorMessage(text: string): string {
  try {
    return String(JSON.parse(text)?.error?.message ?? text).slice(0, 70);
  } catch {
    return text.slice(0, 70);
  }
}
