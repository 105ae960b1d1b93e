import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, useSession, type Session } from './api';
import { AccountDetail, Accounts } from './pages/accounts';
import { Deployments } from './pages/deployments';
import { Audit } from './pages/audit';
import { KeyHolder } from './pages/key-holder';
import { KeysPanel } from './pages/keys';
import { Overview } from './pages/overview';
import { SignIn } from './pages/sign-in';
import { message } from './widgets';

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function OperatorPage({ hash }: { hash: string }) {
  const account = /^#\/accounts\/(.+)$/.exec(hash);
  if (account) return <AccountDetail id={decodeURIComponent(account[1]!)} />;
  if (hash === '#/accounts') return <Accounts />;
  if (hash === '#/keys') return <KeysPanel />;
  if (hash === '#/deployments') return <Deployments />;
  if (hash === '#/audit') return <Audit />;
  return <Overview />;
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState<string>();
  const hash = useHash();
  useSession(session ?? undefined, () => {
    setSession(null);
    setNotice('Your session has ended: sign in again.');
  });
  useEffect(() => {
    // 204 (undefined): nobody is signed in.
    api.session().then((s) => setSession(s ?? null), () => setSession(null));
  }, []);
  if (session === undefined) return <p class="muted">Loading…</p>;
  if (session === null) return <SignIn notice={notice} onSignedIn={(s) => (setNotice(undefined), setSession(s))} />;
  const signOut = async () => {
    try {
      await api.signOut();
      setNotice('Signed out.');
    } catch (e) {
      setNotice(message(e));
    }
    setSession(null);
  };
  const operator = session.role === 'operator';
  const links: Array<[string, string]> = operator
    ? [
        ['#/', 'Overview'],
        ['#/accounts', 'Accounts'],
        ['#/keys', 'Keys'],
        ['#/deployments', 'Deployments'],
        ['#/audit', 'Audit log'],
      ]
    : [];
  return (
    <>
      <header>
        <strong>Switchyard</strong>
        <span class="role" data-testid="role">
          {roleLabel(session)}
        </span>
        <nav>
          {links.map(([href, label]) => (
            <a key={href} href={href} class={hash === href || (href === '#/' && !hash) ? 'on' : ''}>
              {label}
            </a>
          ))}
        </nav>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <div class="page">{operator ? <OperatorPage hash={hash} /> : <KeyHolder who={session.role === 'user' ? 'user' : 'key'} />}</div>
    </>
  );
}

function roleLabel(s: Session): string {
  const who = s.user ? ` · ${s.user.name ?? s.user.subject}` : '';
  if (s.role === 'operator') return `operator${who}`;
  if (s.role === 'user') return `user${who} · ${s.account_id ?? ''}`;
  return `key holder · ${s.account_id ?? ''}`;
}

render(<App />, document.getElementById('app')!);
