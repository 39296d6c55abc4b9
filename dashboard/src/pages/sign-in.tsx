import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { saveToken } from '../session.js';
import { ErrorBox } from '../ui.js';

/**
 * Sign-in with an organization's admin token. The token is checked against an admin-only route before it is
 * kept, so a read-only or payroll-submitter token is refused here with a clear reason rather than page by page.
 */
export function SignInPage({ notice, onSignedIn }: { notice: string | null; onSignedIn: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const submit = async (e: Event) => {
    e.preventDefault();
    const token = input.current?.value.trim() ?? '';
    setError(null);
    if (!token) {
      setError(
        new ApiError(0, 'required', 'Enter an admin token.', [
          { field: 'token', code: 'required', message: 'An admin token (pk_sandbox_… or pk_live_…) is required' },
        ]),
      );
      input.current?.focus();
      return;
    }
    setBusy(true);
    try {
      await api('GET', '/v1/api-keys', { query: { limit: 1 }, token });
      saveToken(token);
      onSignedIn();
    } catch (err) {
      if (err instanceof ApiError && err.code === 'insufficient_scope') {
        setError(
          new ApiError(
            err.status,
            err.code,
            'This token is valid but is not an admin token: the dashboard needs the admin scope.',
            err.details,
            err.requestId,
          ),
        );
      } else {
        setError(err);
      }
      input.current?.focus();
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="signin" id="main">
      <div class="signin-card">
        <h1>Payroll API dashboard</h1>
        <p class="muted">
          Sign in with your organization's admin token. It is kept in this tab only (session storage) and is forgotten
          when the tab closes.
        </p>
        {notice && (
          <p class="alert alert-info" role="status">
            {notice}
          </p>
        )}
        <ErrorBox error={error} title="Sign-in failed" />
        <form onSubmit={submit} noValidate aria-describedby="token-hint">
          <div class="field">
            <label for="token">Admin token</label>
            <input
              ref={input}
              id="token"
              name="token"
              type="password"
              class="input mono"
              autoComplete="off"
              spellcheck={false}
              required
              aria-invalid={error ? 'true' : undefined}
              placeholder="pk_sandbox_…"
            />
            <p class="hint" id="token-hint">
              Create an organization with <code>npm run admin -- org create --name "Acme"</code> to get one.
            </p>
          </div>
          <button type="submit" class="button button-primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </div>
    </main>
  );
}
