import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of the database, to fail it the ways networks do:
 * - `pass`: forwards both ways;
 * - `refuse`: ends every open connection with a reset and refuses new ones (a database down);
 * - `blackhole`: keeps connections open but forwards nothing either way (a lost route: nothing
 *   is refused, nothing answers).
 */
export type ProxyMode = 'pass' | 'refuse' | 'blackhole';

export interface TcpProxy {
  port: number;
  /** The proxy's own address, as a URL with the target's path and user: `postgres://...@127.0.0.1:<port>/db`. */
  url(targetUrl: string): string;
  setMode(mode: ProxyMode): void;
  /** Local ports of the proxy's connections to the target (what pg_stat_activity shows as client_port). */
  upstreamPorts(): number[];
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  const pairs = new Set<Pair>();
  const server: Server = createServer((client) => {
    if (mode === 'refuse') return void client.resetAndDestroy();
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    // Forwarding checks the mode per chunk, so a blackhole swallows what is already flowing too.
    client.on('data', (d) => void (mode === 'pass' && upstream.write(d)));
    upstream.on('data', (d) => void (mode === 'pass' && client.write(d)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url(targetUrl) {
      const u = new URL(targetUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    setMode(next) {
      mode = next;
      if (next === 'refuse') {
        for (const p of pairs) {
          p.client.resetAndDestroy();
          p.upstream.destroy();
        }
        pairs.clear();
      }
    },
    upstreamPorts: () => [...pairs].map((p) => p.upstream.localPort).filter((n): n is number => n !== undefined),
    async close() {
      for (const p of pairs) {
        p.client.destroy();
        p.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
