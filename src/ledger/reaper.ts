/** Anything with reapExpired: the Ledger, or a test double. */
export interface Reapable {
  reapExpired(now?: Date): Promise<number>;
}

export interface ReaperLog {
  info?(obj: object, msg?: string): void;
  error?(obj: object, msg?: string): void;
}

/**
 * Expires orphaned holds once now and then every `intervalMs`. The timer is unref'd so it never
 * keeps the process alive; runs never overlap; a failed run is logged and the next one retries.
 */
export function startReaper(ledger: Reapable, intervalMs: number, log?: ReaperLog): () => void {
  let running = false;
  let stopped = false;
  const run = async () => {
    if (running || stopped) return;
    running = true;
    try {
      const n = await ledger.reapExpired();
      if (n > 0) log?.info?.({ expired: n }, 'reaper released expired holds');
    } catch (err) {
      log?.error?.({ err }, 'reaper run failed');
    } finally {
      running = false;
    }
  };
  void run();
  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
