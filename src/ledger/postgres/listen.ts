import pg from 'pg';
import type { LedgerEvent, LedgerListener } from '../statements.js';

/** The one channel every instance of a database listens on; the payload names the schema, the event and the id. */
export const CHANNEL = 'switchyard_ledger';

const EVENTS = new Set<string>(['key', 'wanted']);
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export interface ListenOptions {
  connectionString: string;
  /** The schema the ledger runs in (its announcements carry it): announcements of other schemas are ignored. */
  schema: string;
  connectTimeoutMs: number;
  log?: { warn(obj: object, msg?: string): void };
}

/**
 * Listens on its own connection (a pooled one would be handed to other statements) for the
 * announcements of every instance (`announce`: PostgreSQL NOTIFY, delivered when the announcing
 * transaction commits). While the connection is down announcements may be missed: `listening` is
 * false, `onState(false)` is called, and the connection is opened again with a growing pause;
 * `onState(true)` follows once it listens again, so the caller can drop what it may have missed.
 */
export async function listenPostgres(opts: ListenOptions, onEvent: (event: LedgerEvent, id: string) => void, onState: (listening: boolean) => void): Promise<LedgerListener> {
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let pause = RECONNECT_MIN_MS;
  let timer: NodeJS.Timeout | undefined;
  const prefix = `${opts.schema}\t`;

  const setState = (on: boolean) => {
    if (listening === on) return;
    listening = on;
    onState(on);
  };
  const lost = (err?: Error) => {
    if (closed) return;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      client = undefined;
    }
    if (listening) opts.log?.warn({ err: err && { message: err.message } }, 'ledger announcements: the listening connection was lost; leases are not served until it is back');
    setState(false);
    if (!timer) {
      timer = setTimeout(() => {
        timer = undefined;
        void open();
      }, pause);
      timer.unref();
      pause = Math.min(pause * 2, RECONNECT_MAX_MS);
    }
  };
  const open = async () => {
    if (closed) return;
    const c = new pg.Client({ connectionString: opts.connectionString, connectionTimeoutMillis: opts.connectTimeoutMs, keepAlive: true });
    client = c;
    c.on('error', (err) => lost(err));
    c.on('end', () => lost());
    c.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload?.startsWith(prefix)) return;
      const [, event, id] = n.payload.split('\t');
      if (EVENTS.has(event) && id) onEvent(event as LedgerEvent, id);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
      if (closed) return void c.end().catch(() => undefined);
      pause = RECONNECT_MIN_MS;
      setState(true);
    } catch (err) {
      if (client === c) lost(err as Error);
    }
  };
  await open();
  return {
    get listening() {
      return listening;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      listening = false;
      const c = client;
      client = undefined;
      if (c) {
        c.removeAllListeners();
        c.on('error', () => undefined);
        await c.end().catch(() => undefined);
      }
    },
  };
}
