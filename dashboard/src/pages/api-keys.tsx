import { useState } from 'preact/hooks';
import { api, listPage } from '../api.js';
import { TOKEN_TYPES, type ApiKey, type IssuedApiKey, type TokenType } from '../types.js';
import {
  ErrorBox,
  Field,
  formValue,
  LoadMore,
  PageTitle,
  SectionHead,
  SecretOnce,
  StatusBadge,
  TableRegion,
  useAsync,
  When,
} from '../ui.js';

const TYPE_HELP: Record<TokenType, string> = {
  'read-only': 'Reads employees, payrolls and paystubs.',
  'payroll-submitter': 'Reads, and submits payrolls.',
  admin: 'Everything, keys, webhooks and settings included.',
};

const GRACE: { seconds: number; label: string }[] = [
  { seconds: 0, label: 'no grace' },
  { seconds: 3600, label: '1 hour grace' },
  { seconds: 86_400, label: '24 hours grace' },
  { seconds: 7 * 86_400, label: '7 days grace' },
];

function keyStatus(k: ApiKey, now = Date.now()): string {
  if (k.revoked_at) return 'revoked';
  if (k.expires_at && Date.parse(k.expires_at) <= now) return 'expired';
  if (k.previous_token_expires_at && Date.parse(k.previous_token_expires_at) > now) return 'rotating';
  return 'active';
}

export function ApiKeysPage() {
  const [extra, setExtra] = useState<{ items: ApiKey[]; next: string | null } | null>(null);
  const first = useAsync(async () => {
    setExtra(null);
    return listPage<ApiKey>('/v1/api-keys', 'api_keys', { limit: 50 });
  }, []);
  const [issued, setIssued] = useState<{ key: IssuedApiKey; action: 'created' | 'rotated' } | null>(null);
  const [formError, setFormError] = useState<unknown>(null);
  const [rowError, setRowError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [moreLoading, setMoreLoading] = useState(false);
  const [type, setType] = useState<TokenType>('read-only');

  const keys = [...(first.data?.items ?? []), ...(extra?.items ?? [])];
  const next = extra ? extra.next : (first.data?.next_page_token ?? null);

  const loadMore = async () => {
    setMoreLoading(true);
    try {
      const page = await listPage<ApiKey>('/v1/api-keys', 'api_keys', { limit: 50, page_token: next });
      setExtra({ items: [...(extra?.items ?? []), ...page.items], next: page.next_page_token });
    } catch (err) {
      setRowError(err);
    } finally {
      setMoreLoading(false);
    }
  };

  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setFormError(null);
    setBusy(true);
    try {
      const expires = formValue(form, 'expires_at');
      const body = {
        name: formValue(form, 'name'),
        type: formValue(form, 'type'),
        ...(expires && { expires_at: new Date(expires).toISOString() }),
      };
      const { data } = await api<IssuedApiKey>('POST', '/v1/api-keys', { body });
      setIssued({ key: data, action: 'created' });
      form.reset();
      setType('read-only');
      first.reload();
    } catch (err) {
      setFormError(err);
    } finally {
      setBusy(false);
    }
  };

  const rotate = async (k: ApiKey, select: HTMLSelectElement | null) => {
    const grace = Number(select?.value ?? 86_400);
    const keeps =
      grace === 0
        ? 'stops working at once'
        : `keeps working for ${GRACE.find((g) => g.seconds === grace)?.label.replace(' grace', '') ?? `${grace} s`}`;
    if (!confirm(`Rotate "${k.name}"? A new token is issued; the current one ${keeps}.`)) return;
    setRowError(null);
    try {
      const { data } = await api<IssuedApiKey>('POST', `/v1/api-keys/${encodeURIComponent(k.api_key_id)}/rotate`, {
        body: { grace_period_seconds: grace },
      });
      setIssued({ key: data, action: 'rotated' });
      first.reload();
    } catch (err) {
      setRowError(err);
    }
  };

  const revoke = async (k: ApiKey) => {
    if (!confirm(`Revoke "${k.name}" now? Every request made with it is refused from now on. This cannot be undone.`))
      return;
    setRowError(null);
    try {
      await api('DELETE', `/v1/api-keys/${encodeURIComponent(k.api_key_id)}`);
      first.reload();
    } catch (err) {
      setRowError(err);
    }
  };

  return (
    <>
      <PageTitle subtitle="Tokens for your integrations. A token is shown once, when it is created or rotated; only its hash is stored.">
        API keys
      </PageTitle>

      {issued && (
        <SecretOnce
          title={`New token for "${issued.key.name}"`}
          value={issued.key.token}
          note={
            issued.action === 'created'
              ? 'Copy it now and keep it in a secret manager: it will not be shown again.'
              : 'The key was rotated. Copy the new token now: it will not be shown again. The old token keeps working for the grace period.'
          }
          onDone={() => setIssued(null)}
        />
      )}

      <section class="card" aria-labelledby="create-key-title">
        <h2 id="create-key-title">Create a key</h2>
        <ErrorBox error={formError} title="The key was not created" />
        <form class="form-grid" onSubmit={create}>
          <Field id="key-name" label="Name" hint="What uses it, e.g. “ledger sync”.">
            <input id="key-name" name="name" class="input" required maxLength={100} aria-describedby="key-name-hint" />
          </Field>
          <Field id="key-type" label="Type" hint={`${TYPE_HELP[type]} Give each integration the least it needs.`}>
            <select
              id="key-type"
              name="type"
              class="input"
              aria-describedby="key-type-hint"
              value={type}
              onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value as TokenType)}
            >
              {TOKEN_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </Field>
          <Field id="key-expires" label="Expires (optional)" hint="Your local time; leave empty for no expiry.">
            <input
              id="key-expires"
              name="expires_at"
              type="datetime-local"
              class="input"
              aria-describedby="key-expires-hint"
            />
          </Field>
          <div class="form-actions">
            <button type="submit" class="button button-primary" disabled={busy}>
              {busy ? 'Creating…' : 'Create key'}
            </button>
          </div>
        </form>
      </section>

      <section aria-labelledby="keys-title">
        <SectionHead titleId="keys-title" title="Keys" onRefresh={first.reload} />
        <ErrorBox error={first.error} title="The keys could not be loaded" />
        <ErrorBox error={rowError} />
        {first.loading && !first.data && <p aria-live="polite">Loading keys…</p>}
        {first.data && keys.length === 0 && <p>No keys yet.</p>}
        {keys.length > 0 && (
          <TableRegion label="API keys">
            <table class="table responsive">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Token</th>
                  <th scope="col">Status</th>
                  <th scope="col">Activity</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => {
                  const status = keyStatus(k);
                  const graceId = `grace-${k.api_key_id}`;
                  return (
                    <tr key={k.api_key_id}>
                      <td data-label="Name">
                        <strong>{k.name}</strong>
                        <div>
                          <code class="small muted id">{k.api_key_id}</code>
                        </div>
                      </td>
                      <td data-label="Type">{k.type}</td>
                      <td data-label="Token" class="nowrap">
                        <code>{k.token_hint}</code>
                      </td>
                      <td data-label="Status">
                        <StatusBadge status={status} />
                        <div class="small muted nowrap">
                          {k.expires_at ? (
                            <>
                              expires <When iso={k.expires_at} />
                            </>
                          ) : (
                            'no expiry'
                          )}
                        </div>
                      </td>
                      <td data-label="Activity" class="small">
                        <div class="nowrap">
                          created <When iso={k.created_at} />
                        </div>
                        <div class="nowrap">
                          {k.last_used_at ? (
                            <>
                              last used <When iso={k.last_used_at} />
                            </>
                          ) : (
                            'never used'
                          )}
                        </div>
                      </td>
                      <td data-label="Actions" class="actions">
                        {status !== 'revoked' && (
                          <div class="action-stack">
                            <label class="sr-only" for={graceId}>
                              Grace period for the old token of {k.name}
                            </label>
                            <select id={graceId} class="input input-small" title="Grace period for the old token">
                              {GRACE.map((g) => (
                                <option key={g.seconds} value={g.seconds} selected={g.seconds === 86_400}>
                                  {g.label}
                                </option>
                              ))}
                            </select>
                            <button
                              type="button"
                              class="button"
                              aria-label={`Rotate ${k.name}`}
                              onClick={() => rotate(k, document.getElementById(graceId) as HTMLSelectElement | null)}
                            >
                              Rotate
                            </button>
                            <button
                              type="button"
                              class="button button-danger"
                              aria-label={`Revoke ${k.name}`}
                              onClick={() => revoke(k)}
                            >
                              Revoke
                            </button>
                          </div>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableRegion>
        )}
        <LoadMore next={next} loading={moreLoading} onClick={loadMore} label="Load more keys" />
      </section>
    </>
  );
}
