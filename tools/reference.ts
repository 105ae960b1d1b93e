import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The providers' reference material: their official OpenAPI schemas and third-party recorded
 * transcripts. It is not the project's own and is never copied into the repository; the suites
 * that check against it read it from `SWITCHYARD_REFERENCE_DIR` (default `../shared/reference`
 * beside the clone) and are skipped, with a message saying so, when it is absent. When the
 * variable is set, the folder is required (CI sets it): see `test/support/reference-setup.ts`.
 */
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const REFERENCE_DIR = path.resolve(repo, process.env.SWITCHYARD_REFERENCE_DIR || '../shared/reference');

/** True when the reference folder holds what the suites read. */
export const REFERENCE_PRESENT = ['openai-openapi.yaml', 'anthropic-openapi.json', 'transcripts'].every((f) => existsSync(path.join(REFERENCE_DIR, f)));

/** The recorded transcripts, one folder per wire protocol. */
export const TRANSCRIPTS_DIR = path.join(REFERENCE_DIR, 'transcripts');

export const REFERENCE_HINT = `set SWITCHYARD_REFERENCE_DIR to a folder holding openai-openapi.yaml, anthropic-openapi.json and transcripts/ (looked in ${REFERENCE_DIR})`;
