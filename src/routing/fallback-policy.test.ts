import { describe, expect, it } from 'vitest';
import { GatewayError } from '../ir/index.js';
import { nextStep } from './fallback-policy.js';

const refusal = { kind: 'finished', finish: { unified: 'refusal' } } as const;
const failed = (e: GatewayError, emittedOutput = false) => ({ kind: 'failed', error: e, emittedOutput }) as const;

describe('nextStep', () => {
  it('moves on after a refusal while a candidate is left, else lets the refusal through', () => {
    expect(nextStep(refusal, true, false)).toBe('next');
    expect(nextStep(refusal, false, false)).toBe('done');
    const filtered = new GatewayError('invalid_request', 'filtered', { code: 'content_filter' });
    expect(nextStep(failed(filtered), true, false)).toBe('next');
    expect(nextStep(failed(filtered), false, false)).toBe('fail');
  });

  it('moves on after an outage only when opted in and nothing was output', () => {
    const outage = new GatewayError('api_error', 'boom', { retryable: true });
    expect(nextStep(failed(outage), true, false)).toBe('fail');
    expect(nextStep(failed(outage), true, true)).toBe('next');
    expect(nextStep(failed(outage, true), true, true)).toBe('fail');
    expect(nextStep(failed(new GatewayError('invalid_request', 'bad')), true, true)).toBe('fail');
    expect(nextStep({ kind: 'finished', finish: { unified: 'stop' } }, true, true)).toBe('done');
  });

  it('tries another deployment of the same model first after a retryable failure before output, even without opting in to fallback', () => {
    const overloaded = new GatewayError('overloaded', 'busy', { retryable: true });
    expect(nextStep(failed(overloaded), true, true, true)).toBe('another_deployment');
    expect(nextStep(failed(overloaded), false, false, true)).toBe('another_deployment');
    // After output, a non-retryable error, or a refusal: no other deployment.
    expect(nextStep(failed(overloaded, true), true, true, true)).toBe('fail');
    expect(nextStep(failed(new GatewayError('invalid_request', 'bad')), true, true, true)).toBe('fail');
    expect(nextStep(refusal, true, false, true)).toBe('next');
    expect(nextStep(failed(overloaded), false, false, false)).toBe('fail');
  });
});
