/**
 * `work`, or the error `expired()` makes once `ms` have passed, whichever comes first. When the
 * work succeeds after that, `late` gets its result (nobody used it: whatever it did may need
 * undoing). The work itself is not stopped.
 */
export function withinDeadline<T>(work: Promise<T>, ms: number, expired: () => Error, late?: (value: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let missed = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      missed = true;
      reject(expired());
    }, ms);
  });
  work.then(
    (value) => missed && late?.(value),
    () => undefined,
  );
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
