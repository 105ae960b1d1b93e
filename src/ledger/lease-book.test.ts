import { describe, expect, it } from 'vitest';
import { LeaseBook, type LeasePolicy } from './lease-book.js';

const policy: LeasePolicy = { ttlMs: 60_000, windowMs: 2_000, minHolds: 20 };

function book() {
  const clock = { t: 1_000 };
  const b = new LeaseBook(policy, () => clock.t);
  return { b, clock };
}

describe('LeaseBook', () => {
  it('admits holds from the free part only, and never once the lease has expired', () => {
    const { b, clock } = book();
    expect(b.admit(1n)).toBe(false); // nothing granted yet
    b.granted(100n, clock.t + 60_000);
    expect(b.admit(60n)).toBe(true);
    expect(b.admit(41n)).toBe(false);
    expect(b.admit(40n)).toBe(true);
    expect(b.free).toBe(0n);
    b.settle(40n, 10n); // 30 free again, 10 waits for the batch
    expect(b.free).toBe(30n);
    clock.t += 60_000;
    expect(b.free).toBe(0n);
    expect(b.admit(1n)).toBe(false);
  });

  it('keeps what it owes covered: captures leave the lease only when a batch writes them', () => {
    const { b, clock } = book();
    b.granted(100n, clock.t + 60_000);
    b.admit(50n);
    b.admit(30n);
    b.settle(50n, 20n);
    expect(b.owed).toBe(30n + 20n);
    expect(b.pendingCaptures).toBe(20n);
    b.flushed(20n);
    expect(b.owed).toBe(30n);
    expect(b.free).toBe(100n - 20n - 30n);
    expect(() => b.flushed(1n)).toThrow();
    expect(() => b.settle(31n, 0n)).toThrow(); // more than is in use
    expect(() => b.settle(30n, 31n)).toThrow(); // a capture above its hold
    expect(() => b.granted(29n, clock.t + 60_000)).toThrow(); // a lease below what it owes
  });

  it('gives back only the free part beyond what it keeps', () => {
    const { b, clock } = book();
    b.granted(1_000n, clock.t + 60_000);
    b.admit(300n);
    b.settle(300n, 100n); // 100 captured, unwritten
    b.admit(200n);
    expect(b.surplus()).toBe(1_000n - 100n - 200n);
    expect(b.surplus(500n)).toBe(200n);
    b.returned(200n);
    expect(b.free).toBe(500n);
    expect(() => b.returned(501n)).toThrow();
  });

  it('sizes itself from the spend of the last window, and at least minHolds of its largest hold', () => {
    const { b, clock } = book();
    b.granted(1_000_000n, clock.t + 60_000);
    expect(b.target(10n)).toBe(200n); // nothing spent yet: 20 holds of the next one
    for (let i = 0; i < 100; i++) {
      b.admit(1_000n);
      clock.t += 10;
    }
    expect(b.target()).toBe(100_000n); // 100 holds of 1,000 in the window
    clock.t += 1_500; // the first 50 left the 2 s window
    expect(b.target()).toBe(50_000n);
    clock.t += 2_000;
    expect(b.target()).toBe(0n); // a quiet scope needs nothing: its next renewal gives everything back
  });

  it('renews ahead of need: when the free part falls below half the target, or a third of its life has passed', () => {
    const { b, clock } = book();
    b.granted(10_000n, clock.t + 60_000);
    expect(b.renewal(100n)).toBeUndefined(); // target 2,000; 10,000 free
    for (let i = 0; i < 9; i++) b.admit(1_000n);
    // 1,000 free, target max(9,000 spent, 20 x 1,000): renew to what it owes plus the target
    expect(b.renewal()).toBe(9_000n + 20_000n);
    const quiet = book();
    quiet.b.granted(10_000n, quiet.clock.t + 60_000);
    quiet.clock.t += 19_999;
    expect(quiet.b.renewal(1n)).toBeUndefined();
    quiet.clock.t += 1;
    expect(quiet.b.renewal(1n)).toBe(20n); // due: its expiry moves on, at the size it needs (the rest goes back)
  });
});
