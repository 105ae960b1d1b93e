/**
 * vitest global setup: says once, at the start of the run, whether the suites that check against
 * the providers' reference material run. Without the folder they are skipped and the official-schema
 * checks inside other tests find nothing; with SWITCHYARD_REFERENCE_DIR set the folder is required,
 * so a CI run that names it cannot skip them silently.
 */
import { REFERENCE_DIR, REFERENCE_HINT, REFERENCE_PRESENT } from '../../tools/reference.js';

export default function setup(): void {
  if (REFERENCE_PRESENT) return;
  if (process.env.SWITCHYARD_REFERENCE_DIR) {
    throw new Error(`SWITCHYARD_REFERENCE_DIR=${process.env.SWITCHYARD_REFERENCE_DIR}: ${REFERENCE_DIR} lacks openai-openapi.yaml, anthropic-openapi.json or transcripts/`);
  }
  console.warn(
    [
      '',
      'Reference suites SKIPPED: the providers\' official schemas and recorded transcripts are not here.',
      '  skipped: the recorded-transcript suites (spec/transcripts, test/providers/transcripts and specifics,',
      '  test/integration/cross-transcripts and responses-transcripts, the recorded parts of the protocol',
      '  encoder tests) and the official-schema checks inside the other tests.',
      `  To run them: ${REFERENCE_HINT}.`,
      '',
    ].join('\n'),
  );
}
