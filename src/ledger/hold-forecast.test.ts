import { describe, expect, it } from 'vitest';
import { HoldForecast } from './hold-forecast.js';

function forecast(maxEntries = 10) {
  let clock = 1_000;
  const f = new HoldForecast({ ttlMs: 100, maxEntries }, () => clock);
  return { f, advance: (ms: number) => (clock += ms) };
}

describe('HoldForecast', () => {
  it('knows nothing of an account until one of its holds is answered', () => {
    const { f } = forecast();
    expect(f.covers('a', 1n)).toBe(false);
    f.submitted('a', 10n);
    expect(f.covers('a', 1n)).toBe(false);
    f.answered('a', 10n, 90n);
    expect(f.covers('a', 90n)).toBe(true);
    expect(f.covers('a', 91n)).toBe(false);
  });

  it('counts the holds submitted and not yet answered against the last balance read', () => {
    const { f } = forecast();
    f.submitted('a', 10n);
    f.answered('a', 10n, 100n);
    f.submitted('a', 30n);
    f.submitted('a', 50n);
    expect(f.covers('a', 20n)).toBe(true);
    expect(f.covers('a', 21n)).toBe(false);
    // The first answer is read after its own hold; the second is still pending.
    f.answered('a', 30n, 70n);
    expect(f.covers('a', 20n)).toBe(true);
    expect(f.covers('a', 21n)).toBe(false);
    f.answered('a', 50n, 20n);
    expect(f.covers('a', 20n)).toBe(true);
  });

  it('a refused hold forgets the balance; so does time', () => {
    const { f, advance } = forecast();
    f.submitted('a', 10n);
    f.answered('a', 10n, 100n);
    f.submitted('a', 10n);
    f.answered('a', 10n, undefined);
    expect(f.covers('a', 1n)).toBe(false);
    f.submitted('b', 10n);
    f.answered('b', 10n, 100n);
    advance(100);
    expect(f.covers('b', 1n)).toBe(true);
    advance(1);
    expect(f.covers('b', 1n)).toBe(false);
  });

  it('stays bounded, and never forgets an account with a hold still pending', () => {
    const { f } = forecast(2);
    f.submitted('busy', 5n);
    f.submitted('idle', 5n);
    f.answered('idle', 5n, 100n);
    f.submitted('new', 5n); // full: 'idle' (nothing pending) goes, 'busy' stays
    f.answered('busy', 5n, 50n);
    f.answered('new', 5n, 60n);
    expect(f.covers('busy', 50n)).toBe(true);
    expect(f.covers('new', 60n)).toBe(true);
    expect(f.covers('idle', 1n)).toBe(false);
  });
});
