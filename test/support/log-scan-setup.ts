/**
 * vitest global setup: every log line a gateway writes during the run is captured under one folder
 * (log-capture.ts), and at the end of the run scanned for every key and token (log-scan.ts). A
 * finding fails the run, naming the file, the line and the kind of secret; so does a scan that
 * could pass without looking (a gateway a helper started whose lines are not in the capture). The
 * folder is removed after a clean scan and kept, with its path printed, after a failed one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOG_DIR_ENV } from './log-capture.js';
import { describeFinding, scanLogs } from './log-scan.js';

/** Findings printed at most (the count is always given). */
const MAX_PRINTED = 40;

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-test-logs-'));
  // The workers (forked after this) and the processes they spawn inherit it.
  process.env[LOG_DIR_ENV] = dir;
  return () => {
    const result = scanLogs(dir);
    const problems: string[] = [];
    if (result.findings.length) {
      problems.push(`${result.findings.length} credential(s) in the gateways' logs:`, ...result.findings.slice(0, MAX_PRINTED).map((f) => `  ${describeFinding(f)}`));
    }
    if (result.startLinesSeen < result.gatewaysStarted) {
      problems.push(`the capture holds the start line of ${result.startLinesSeen} of the ${result.gatewaysStarted} gateways the helpers started: the scan did not see their logs`);
    }
    const summary = `log scan: ${result.lines} lines in ${result.files} files (${result.gatewaysStarted} in-process gateways)`;
    if (problems.length === 0) {
      console.log(`\n${summary}, no key or token\n`);
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    console.error(`\n${summary}: FAILED\n${problems.join('\n')}\n(the logs are kept in ${dir})\n`);
    process.exitCode = 1;
  };
}
