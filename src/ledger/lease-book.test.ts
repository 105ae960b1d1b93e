import { describe, expect, it } from 'vitest';
import { LeaseBook, type LeasePolicy } from './lease-book.js';

const policy: LeasePolicy = { ttlMs: 60_000, windowMs: 2_000, minHolds: 20 };

function book(amount = 0n) {
  const clock = { t: 1_000 };
  const b = new LeaseBook(policy, () => clock.t);
  if (amount > 0n) {
    b.grew(amount);
    b.extended(clock.t);
  }
  return { b, clock };
}

describe('LeaseBook', () => {
  it('admits holds from the free part only, and stops a tenth of its lifetime before the database expires it', () => {
    const { b, clock } = book();
    expect(b.admit(1n)).toBe(false); // nothing reserved yet
    b.grew(100n);
    expect(b.admit(1n)).toBe(false); // no expiry yet: not live
    b.extended(clock.t);
    expect(b.admit(60n)).toBe(true);
    expect(b.admit(41n)).toBe(false);
    expect(b.admit(40n)).toBe(true);
    expect(b.free).toBe(0n);
    expect(b.settle(40n, 10n)).toBe(10n); // 30 free again, 10 waits for the batch
    expect(b.free).toBe(30n);
    clock.t += 54_000;
    expect(b.free).toBe(0n);
    expect(b.admit(1n)).toBe(false);
  });

  it('keeps what it owes covered: captures leave the lease only when a batch writes them', () => {
    const { b } = book(100n);
    b.admit(50n);
    b.admit(30n);
    expect(b.inFlight).toBe(2);
    b.settle(50n, 20n);
    expect(b.owed).toBe(30n + 20n);
    b.flushed(20n);
    expect(b.owed).toBe(30n);
    expect(b.free).toBe(100n - 20n - 30n);
    expect(() => b.flushed(1n)).toThrow();
    expect(() => b.settle(31n, 0n)).toThrow(); // more than is in use
  });

  it('covers a capture up to its hold: beyond it is the account\'s debt, not the lease\'s', () => {
    const { b } = book(100n);
    b.admit(40n);
    expect(b.settle(40n, 55n)).toBe(40n);
    expect(b.owed).toBe(40n);
    b.flushed(40n);
    expect(b.free).toBe(60n);
  });

  it('sets a return aside as soon as it is asked for, so nothing admitted meanwhile leans on it', () => {
    const { b } = book(100n);
    b.admit(30n);
    expect(b.surplus()).toBe(70n);
    expect(b.beginReturn(70n)).toBe(true);
    expect(b.free).toBe(0n);
    expect(b.admit(1n)).toBe(false);
    b.endReturn(70n, true);
    expect(b.free).toBe(0n);
    expect(b.owed).toBe(30n);
    expect(b.beginReturn(1n)).toBe(false);
    // A return the database did not take leaves the amount in the lease.
    b.settle(30n, 0n);
    expect(b.beginReturn(30n)).toBe(true);
    b.endReturn(30n, false);
    expect(b.free).toBe(30n);
  });

  it('after its lease ended, a batch takes captures off what is owed but not off the reserve', () => {
    const { b } = book(100n);
    b.admit(40n);
    b.settle(40n, 40n);
    b.flushedAfterEnd(40n);
    expect(b.owed).toBe(0n);
  });

  it('sizes itself from the spend window, at least minHolds of its largest hold', () => {
    const { b, clock } = book(10_000n);
    expect(b.target(5n)).toBe(100n); // nothing spent yet: 20 x the next hold
    for (let i = 0; i < 30; i++) b.admit(10n);
    expect(b.target()).toBe(300n); // 30 holds of 10 in the window beat the floor of 200
    clock.t += 2_001;
    expect(b.target()).toBe(0n); // the window moved on, and nothing is in it
  });

  it('forgets the largest hold once it leaves the window', () => {
    const { b, clock } = book(100_000n);
    b.admit(500n);
    clock.t += 1_500;
    b.admit(10n);
    b.admit(20n);
    expect(b.target()).toBe(10_000n); // 20 x 500
    clock.t += 600; // the 500 left the window; the 20 is now the largest
    expect(b.target()).toBe(400n);
  });

  it('grows when its free part is below half the target, and moves its expiry on every third of its lifetime', () => {
    const { b, clock } = book(220n);
    expect(b.renewal()).toBeUndefined();
    for (let i = 0; i < 21; i++) b.admit(10n); // free 10, target 210
    expect(b.renewal()).toEqual({ grow: 200n });
    b.grew(200n);
    expect(b.renewal()).toBeUndefined();
    clock.t += 20_000;
    expect(b.renewal()).toEqual({ grow: 0n }); // the window is empty: only the expiry is due
  });

  it('is idle once nothing was admitted for two windows and nothing is owed', () => {
    const { b, clock } = book(100n);
    b.admit(10n);
    clock.t += 5_000;
    expect(b.idle).toBe(false); // a request still runs
    b.settle(10n, 10n);
    expect(b.idle).toBe(false); // its capture is not written yet
    b.flushed(10n);
    expect(b.idle).toBe(true);
  });
});
