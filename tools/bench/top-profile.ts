/**
 * Summarise a V8 .cpuprofile (from `BENCH_CPU_PROF=1 make bench`): the top functions by self
 * time, and self time per package or source folder.
 *   node --import tsx tools/bench/top-profile.ts .bench/prof/<file>.cpuprofile [N]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

export function summarise(profile: Profile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const from = firstRequestSample(profile, byId);
  profile.samples.forEach((id, i) => {
    if (i >= from) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const file = url.replace(/^file:\/\//, '').replace(/^.*\/work\/main\//, '');
    fns.set(`${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`, (fns.get(`${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`) ?? 0) + us);
    areas.set(area(file, functionName), (areas.get(area(file, functionName)) ?? 0) + us);
  }
  const fmt = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`).join('\n');
  return `total ${(total / 1000).toFixed(0)} ms sampled\n\nby area:\n${fmt(areas, 20)}\n\ntop functions (self time):\n${fmt(fns, top)}\n`;
}

/** Start-up (module loading, compiling the validators) is not the hot path: skip to the first request. */
function firstRequestSample(profile: Profile, byId: Map<number, Node>): number {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inRequest = new Map<number, boolean>();
  const check = (id: number): boolean => {
    const known = inRequest.get(id);
    if (known !== undefined) return known;
    const up = parent.get(id);
    const hit = byId.get(id)!.callFrame.url.includes('src/http/app.ts') || (up !== undefined && check(up));
    inRequest.set(id, hit);
    return hit;
  };
  const i = profile.samples.findIndex((id) => check(id));
  return i < 0 ? 0 : i;
}

function area(file: string, fn: string): string {
  if (!file) return fn.startsWith('(') ? fn : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg) return pkg[1];
  if (file.startsWith('node:')) return file;
  const src = /^(src\/[^/]+(?:\/[^/]+)?)\//.exec(file);
  return src ? src[1] : file;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [path, n] = process.argv.slice(2);
  process.stdout.write(summarise(JSON.parse(readFileSync(path, 'utf8')) as Profile, Number(n ?? 25)));
}
