/**
 * A real `switchyard serve` process, for the tests that signal or kill it: started on a free
 * port, resolved once it logs where it listens, its log lines kept for inspection.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { captureChildLog } from './log-capture.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface GatewayProcess {
  url: string;
  proc: ChildProcess;
  /** Every JSON log line so far. */
  logs(): Array<Record<string, any>>;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
}

export function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A copy of its log for the run's credential scan (log-capture.ts).
  captureChildLog(proc, 'serve', env);
  const lines: Array<Record<string, any>> = [];
  let partial = '';
  let stderr = '';
  const exited = new Promise<number | string>((resolve) => proc.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d) => {
      partial += d;
      const complete = partial.split('\n');
      partial = complete.pop()!;
      for (const line of complete) {
        if (!line.startsWith('{')) continue;
        const parsed = JSON.parse(line);
        lines.push(parsed);
        if (parsed.msg === 'switchyard is listening') resolve({ url: parsed.url, proc, logs: () => lines, exited });
      }
    });
    proc.stderr!.on('data', (d) => (stderr += d));
    void exited.then((code) => reject(new Error(`gateway exited (${code}) before listening: ${stderr}`)));
  });
}
