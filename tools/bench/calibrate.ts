/**
 * What a message between two processes costs this machine: the context for every CPU figure of
 * the bench. A child process echoes; this process sends 200 bytes and waits for the echo, either
 * back to back (the peer is still awake) or with a 1 ms pause first (the peer has gone to sleep
 * and must be woken). On virtual machines the second can cost several times the first, and a
 * gateway's request is a chain of such messages (client, database, upstream).
 */
import { fork } from 'node:child_process';
import net from 'node:net';

export interface Calibration {
  /** CPU of this process per round trip while the peer is awake (µs). */
  busyRoundTripCpuUs: number;
  /** CPU of this process per round trip when the peer had gone to sleep (µs). */
  wakeRoundTripCpuUs: number;
}

if (process.argv[2] === '--echo-server') {
  const server = net.createServer((s) => s.on('data', (d) => s.write(d)));
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as net.AddressInfo).port));
}

export async function calibrate(): Promise<Calibration> {
  const child = fork(new URL(import.meta.url).pathname, ['--echo-server'], { execArgv: ['--import', 'tsx'] });
  try {
    const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(Number(m))));
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    await new Promise((resolve) => socket.once('connect', resolve));
    const payload = Buffer.alloc(200, 'x');
    const roundTrips = async (n: number, pauseMs: number): Promise<number> => {
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
        await new Promise((resolve) => {
          socket.once('data', resolve);
          socket.write(payload);
        });
      }
      const cpu = process.cpuUsage(cpu0);
      return (cpu.user + cpu.system) / n;
    };
    await roundTrips(200, 0); // warm-up
    const busyRoundTripCpuUs = await roundTrips(5000, 0);
    const wakeRoundTripCpuUs = await roundTrips(300, 1);
    socket.destroy();
    return { busyRoundTripCpuUs, wakeRoundTripCpuUs };
  } finally {
    child.kill();
  }
}
