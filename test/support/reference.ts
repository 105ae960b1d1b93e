import { describe, it } from 'vitest';
import { REFERENCE_HINT, REFERENCE_PRESENT } from '../../tools/reference.js';

export { REFERENCE_DIR, REFERENCE_HINT, REFERENCE_PRESENT, TRANSCRIPTS_DIR } from '../../tools/reference.js';

/**
 * For a file whose suites are generated from the reference folder's contents: without that folder
 * they generate nothing, and this registers one skipped suite that says what was skipped and how to
 * enable it (vitest fails a file with no test at all).
 */
export function reportSkippedWithoutReference(what: string): void {
  if (REFERENCE_PRESENT) return;
  describe.skip(`${what}: needs the providers' reference folder; ${REFERENCE_HINT}`, () => {
    it('skipped', () => undefined);
  });
}
