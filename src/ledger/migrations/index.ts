import type { Migration } from 'kysely';
import * as initial from './20260101000000_initial.js';

/** Static migration provider: names sort by timestamp; add new files here in order. */
export const migrations: Record<string, Migration> = {
  '20260101000000_initial': initial,
};
