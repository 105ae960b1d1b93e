/** What a run's attempts share while it goes on. */
import type { Request, StreamEvent } from '../ir/index.js';
import type { Charge } from '../ledger/index.js';
import type { Candidate } from '../routing/index.js';
import type { CallContext, PipelineDeps, RunSummary } from './types.js';
import type { Launched } from './launch-attempt.js';

/** The deployments a run has tried (every model's: their ids are distinct) and its session identity. */
export interface Hops {
  tried: Set<string>;
  session?: string;
}

/** What both paths share: the request, its candidates, and what has been charged so far. */
export interface AttemptsRun {
  deps: PipelineDeps;
  ctx: CallContext;
  req: Request;
  candidates: Candidate[];
  summary: RunSummary;
  charges: Charge[];
  /** The index in `candidates` of the model being tried. */
  model: number;
  hops: Hops;
  /** The attempt to launch next (its model and deployment), unless `early` runs it already. */
  next: Candidate;
  early: Launched | undefined;
  /** Attempts launched so far (each gets its index for its block ids). */
  launches: number;
  /** The attempt under way, billed by runAttempts if the consumer stops while it runs. */
  inFlight?: Launched;
}

export type FallbackEvent = Extract<StreamEvent, { type: 'fallback' }>;
