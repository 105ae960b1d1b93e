import { useEffect, useState } from 'preact/hooks';
import { api, type Session } from '../api';
import { ErrorNote, message } from '../widgets';

/** One field: the admin key signs in the operator, an API key its holder. The key goes to the server once and stays there. */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (s: Session) => void; notice?: string }) {
  // A sign-in through the identity provider that was refused comes back with its reason.
  const [error, setError] = useState<string | undefined>(() => new URLSearchParams(location.search).get('sign_in_error') ?? undefined);
  const [busy, setBusy] = useState(false);
  const [sso, setSso] = useState<{ name: string; login_url: string }>();
  useEffect(() => {
    api.sso().then(setSso, () => setSso(undefined));
  }, []);
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
      {sso ? (
        <p>
          <a class="button" data-testid="sso" href={sso.login_url}>
            Sign in with {sso.name}
          </a>
        </p>
      ) : null}
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
