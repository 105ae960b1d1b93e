/** Counts of cases per operation, split valid/invalid, per status and per mutation. */
export class FuzzReport {
  private rows = new Map<string, { valid: number; invalid: number; statuses: Map<number, number>; kinds: Map<string, number> }>();

  record(operationId: string, kind: 'valid' | 'invalid', status: number, mutation: string): void {
    let row = this.rows.get(operationId);
    if (!row) this.rows.set(operationId, (row = { valid: 0, invalid: 0, statuses: new Map(), kinds: new Map() }));
    row[kind] += 1;
    row.statuses.set(status, (row.statuses.get(status) ?? 0) + 1);
    row.kinds.set(mutation, (row.kinds.get(mutation) ?? 0) + 1);
  }

  /** Why schema-generated ("valid") requests were refused: shows where generation needs realism. */
  refusal(operationId: string, message: string): void {
    const key = `${operationId}: ${message.replace(/"[^"]*"/g, '"…"').replace(/\d+/g, 'N')}`;
    this.refusals.set(key, (this.refusals.get(key) ?? 0) + 1);
  }

  private refusals = new Map<string, number>();

  get total(): number {
    let n = 0;
    for (const r of this.rows.values()) n += r.valid + r.invalid;
    return n;
  }

  statusCount(operationId: string, status: number): number {
    return this.rows.get(operationId)?.statuses.get(status) ?? 0;
  }

  format(): string {
    const lines = ['contract fuzz: cases per operation', `${'operation'.padEnd(22)} ${'valid'.padStart(6)} ${'invalid'.padStart(7)}  statuses`];
    for (const [op, r] of [...this.rows.entries()].sort()) {
      const statuses = [...r.statuses.entries()].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}:${n}`).join(' ');
      lines.push(`${op.padEnd(22)} ${String(r.valid).padStart(6)} ${String(r.invalid).padStart(7)}  ${statuses}`);
    }
    const kinds = new Map<string, number>();
    for (const r of this.rows.values()) for (const [k, n] of r.kinds) kinds.set(k, (kinds.get(k) ?? 0) + n);
    const top = [...this.refusals.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
    if (top.length) lines.push('most common refusals of generated requests:', ...top.map(([k, n]) => `  ${String(n).padStart(4)}  ${k}`));
    lines.push(`total ${this.total} cases; by kind: ${[...kinds.entries()].sort().map(([k, n]) => `${k}:${n}`).join(' ')}`);
    return lines.join('\n');
  }
}
