import { useState } from 'preact/hooks';
import { api, type Session } from '../api';
import { ErrorNote, message } from '../widgets';

/** One field: the admin key signs in the operator, an API key its holder. The key goes to the server once and stays there. */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (s: Session) => void; notice?: string }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    const key = String(new FormData(form).get('key') ?? '');
    setBusy(true);
    setError(undefined);
    try {
      const session = await api.signIn(key);
      form.reset();
      onSignedIn(session);
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="sign-in">
      <h1>Switchyard console</h1>
      <p class="muted">Operators sign in with the admin key (SWITCHYARD_ADMIN_KEY); key holders with their own API key.</p>
      {notice ? <p class="note">{notice}</p> : null}
      <form onSubmit={submit} data-testid="sign-in">
        <label>
          <span>Key</span>
          <input name="key" type="password" autocomplete="off" required placeholder="sk-..." />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <ErrorNote error={error} />
      </form>
    </div>
  );
}
