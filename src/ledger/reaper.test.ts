import { describe, expect, it, vi } from 'vitest';
import { startReaper } from './reaper.js';

describe('startReaper', () => {
  it('runs at once, then on the interval, never overlapping, and stops', async () => {
    vi.useFakeTimers();
    try {
      let calls = 0;
      let inFlight = 0;
      let maxInFlight = 0;
      const ledger = {
        async reapExpired() {
          calls++;
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((r) => setTimeout(r, 250));
          inFlight--;
          return 1;
        },
      };
      const info = vi.fn();
      const stop = startReaper(ledger, 100, { info });
      expect(calls).toBe(1);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(maxInFlight).toBe(1);
      expect(calls).toBeGreaterThan(1);
      expect(info).toHaveBeenCalledWith({ expired: 1 }, expect.any(String));
      stop();
      const after = calls;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(calls).toBe(after);
    } finally {
      vi.useRealTimers();
    }
  });

  it('logs a failed run and keeps going', async () => {
    vi.useFakeTimers();
    try {
      let calls = 0;
      const error = vi.fn();
      const stop = startReaper({ reapExpired: async () => { calls++; throw new Error('db down'); } }, 50, { error });
      await vi.advanceTimersByTimeAsync(120);
      expect(calls).toBe(3);
      expect(error).toHaveBeenCalledTimes(3);
      stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
