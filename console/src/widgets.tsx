import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

/** Loads on mount and when `deps` change; `reload` fetches again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: string; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ data }),
      (e) => live && setState({ error: message(e) }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

export function message(e: unknown): string {
  return e instanceof ApiError || e instanceof Error ? e.message : String(e);
}

export function ErrorNote({ error }: { error?: string }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

/** A form whose submit runs `action`, showing its error (or success note) beneath. */
export function ActionForm({ action, submit, children, testid }: { action: (data: FormData) => Promise<string | void>; submit: string; children: ComponentChildren; testid?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [note, setNote] = useState<string>();
  const onSubmit = async (ev: Event) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    setBusy(true);
    setError(undefined);
    setNote(undefined);
    try {
      const done = await action(new FormData(form));
      if (done) setNote(done);
      form.reset();
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="action" onSubmit={onSubmit} data-testid={testid}>
      {children}
      <button type="submit" disabled={busy}>
        {submit}
      </button>
      <ErrorNote error={error} />
      {note ? <p class="note">{note}</p> : null}
    </form>
  );
}

export function Field({ label, name, ...rest }: { label: string; name: string; [attr: string]: unknown }) {
  return (
    <label>
      <span>{label}</span>
      <input name={name} {...rest} />
    </label>
  );
}

/** A table of rows with the given columns; every cell is text. */
export function Table<T>({ rows, columns, empty, testid }: { rows: T[]; columns: Array<[string, (row: T) => ComponentChildren]>; empty: string; testid?: string }) {
  if (rows.length === 0) return <p class="muted">{empty}</p>;
  return (
    <div class="table-wrap">
      <table data-testid={testid}>
        <thead>
          <tr>
            {columns.map(([h]) => (
              <th key={h}>{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {columns.map(([h, cell]) => (
                <td key={h}>{cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A newest-first list read a page at a time (`before_id` = the last page's `last_id`), as the admin lists page. */
export function usePages<T>(load: (before?: string) => Promise<{ data: T[]; has_more: boolean; last_id: string | number | null }>, deps: unknown[]) {
  const first = useLoad(() => load(), deps);
  const [older, setOlder] = useState<{ rows: T[]; more: boolean; last: string | number | null }>();
  const [error, setError] = useState<string>();
  useEffect(() => setOlder(undefined), [first.data]);
  const more = older ? older.more : (first.data?.has_more ?? false);
  const loadOlder = async () => {
    const last = older ? older.last : first.data?.last_id;
    if (last === null || last === undefined) return;
    try {
      const page = await load(String(last));
      setOlder({ rows: [...(older?.rows ?? []), ...page.data], more: page.has_more, last: page.last_id });
      setError(undefined);
    } catch (e) {
      setError(message(e));
    }
  };
  return { rows: [...(first.data?.data ?? []), ...(older?.rows ?? [])], more, loadOlder, error: first.error ?? error, reload: first.reload };
}

export function OlderButton({ pages }: { pages: { more: boolean; loadOlder: () => void } }) {
  return pages.more ? (
    <button type="button" onClick={pages.loadOlder}>
      Older
    </button>
  ) : null;
}
