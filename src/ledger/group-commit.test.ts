import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

interface Item {
  id: number;
  account: string;
}

/** A fake statement runner that records each batch and can be told to fail. */
function recorder(opts: { fail?: (items: Item[]) => Error | undefined; delayMs?: number } = {}) {
  const batches: number[][] = [];
  let release: (() => void) | undefined;
  const gate = { hold: false };
  const run = async (items: Item[]): Promise<Array<number | Error>> => {
    batches.push(items.map((i) => i.id));
    if (gate.hold) await new Promise<void>((r) => (release = r));
    else await new Promise((r) => setTimeout(r, opts.delayMs ?? 1));
    const failure = opts.fail?.(items);
    if (failure) throw failure;
    return items.map((i) => (i.id < 0 ? new Error(`bad item ${i.id}`) : i.id * 10));
  };
  return { run, batches, gate, release: () => release?.() };
}

const byAccount = { maxInFlight: 1, maxBatch: 100, conflictKey: (i: Item) => i.account };

describe('GroupCommit', () => {
  it('sends a lone item at once, and what arrives while a statement runs in the next one', async () => {
    const r = recorder();
    r.gate.hold = true;
    const gc = new GroupCommit(r.run, byAccount);
    const first = gc.submit({ id: 1, account: 'a' });
    const rest = [2, 3, 4].map((id) => gc.submit({ id, account: `acct-${id}` }));
    expect(r.batches).toEqual([[1]]);
    r.gate.hold = false;
    r.release();
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    expect(r.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('never puts two items with one key in a statement', async () => {
    const r = recorder();
    r.gate.hold = true;
    const gc = new GroupCommit(r.run, byAccount);
    const all = [gc.submit({ id: 1, account: 'x' })];
    for (const [id, account] of [[2, 'a'], [3, 'a'], [4, 'b'], [5, 'a']] as const) all.push(gc.submit({ id, account }));
    r.gate.hold = false;
    r.release();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
    expect(r.batches).toEqual([[1], [2, 4], [3], [5]]);
  });

  it('fails an item alone: per-item errors, and a failed statement is retried item by item', async () => {
    const r = recorder({ fail: (items) => (items.length > 1 && items.some((i) => i.id === 13) ? new Error('statement failed') : undefined) });
    r.gate.hold = true;
    const gc = new GroupCommit(r.run, byAccount);
    const first = gc.submit({ id: 1, account: 'a' });
    const others = [2, -3, 13, 4].map((id) => gc.submit({ id, account: `k${id}` }));
    r.gate.hold = false;
    r.release();
    await first;
    const results = await Promise.allSettled(others);
    expect(results.map((x) => (x.status === 'fulfilled' ? x.value : (x.reason as Error).message))).toEqual([20, 'bad item -3', 130, 40]);
    expect(r.batches).toEqual([[1], [2, -3, 13, 4], [2], [-3], [13], [4]]);
  });

  it('runs a deadlock victim again, and settled() waits for everything submitted before it', async () => {
    let deadlocks = 2;
    const r = recorder({ fail: () => (deadlocks-- > 0 ? Object.assign(new Error('deadlock detected'), { code: '40P01' }) : undefined) });
    const gc = new GroupCommit(r.run, { ...byAccount, maxInFlight: 2 });
    let done = 0;
    void gc.submit({ id: 7, account: 'a' }).then(() => done++);
    void gc.submit({ id: 8, account: 'b' }).then(() => done++);
    await gc.settled();
    expect(done).toBe(2);
    expect(r.batches.flat().filter((id) => id === 7 || id === 8).length).toBeGreaterThan(2);
  });

  it('settled() is not starved by submissions that keep coming after it', async () => {
    const r = recorder({ delayMs: 2 });
    const gc = new GroupCommit(r.run, { ...byAccount, maxInFlight: 1 });
    let stop = false;
    let id = 0;
    const flood = (async () => {
      while (!stop) {
        void gc.submit({ id: ++id, account: `f${id}` });
        await new Promise((res) => setTimeout(res, 1));
      }
    })();
    const first = gc.submit({ id: 0, account: 'first' });
    await new Promise((res) => setTimeout(res, 10));
    await gc.settled();
    expect(await first).toBe(0);
    stop = true;
    await flood;
    await gc.settled();
  });
});
