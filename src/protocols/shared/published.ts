import type { components } from '../../../generated/types.js';

/**
 * A schema of the published document (generated/openapi.yaml, typed by openapi-typescript in
 * generated/types.ts). Encoders declare what they return as one, so the compiler checks that the
 * gateway answers what its contract promises.
 */
export type Published<Name extends keyof components['schemas']> = components['schemas'][Name];
