import { GatewayError, type UpstreamEvent } from '../../ir/index.js';
import type { ProviderCall } from '../types.js';
import { forgetCredentials } from './get-access-token.js';

/**
 * Run a Vertex call; when Vertex answers 401 before any output (the token the library still held
 * was revoked, or the credentials rotated), drop the cached credentials and run it once more with
 * a fresh token. A second 401 goes to the caller.
 */
export async function* withTokenRenewal(call: ProviderCall, kind: string, run: () => AsyncIterable<UpstreamEvent>): AsyncGenerator<UpstreamEvent> {
  let yielded = false;
  try {
    for await (const ev of run()) {
      yielded = true;
      yield ev;
    }
    return;
  } catch (e) {
    if (yielded || call.signal.aborted || !refusedToken(e, kind)) throw e;
  }
  forgetCredentials(call.target.provider);
  yield* run();
}

function refusedToken(e: unknown, kind: string): boolean {
  if (!(e instanceof GatewayError) || e.kind !== 'authentication') return false;
  const upstream = e.details?.upstream as { provider?: unknown; status?: unknown } | undefined;
  return upstream?.provider === kind && upstream.status === 401;
}
