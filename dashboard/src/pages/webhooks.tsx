import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, listPage } from '../api.js';
import {
  DELIVERY_STATUSES,
  type EventItem,
  type IssuedWebhook,
  SUBSCRIBABLE_EVENT_TYPES,
  type Webhook,
} from '../types.js';
import {
  ErrorBox,
  Field,
  formatDateTime,
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
import { NOT_DELIVERED } from './events.js';

function lastAttempt(d: EventItem['deliveries'][number]): string {
  const a = d.attempts[d.attempts.length - 1];
  if (!a) return 'not tried yet';
  const outcome = a.status_code !== null ? `HTTP ${a.status_code}` : (a.error ?? 'no answer');
  return `${outcome}, ${a.latency_ms} ms, ${formatDateTime(a.at, true)}`;
}

/** What became of a "Send test event": the queued event with a link to it, or the API's refusal in plain words. */
interface TestOutcome {
  webhook: Webhook;
  event?: EventItem;
  error?: unknown;
}

function TestEventResult({ outcome, onDone }: { outcome: TestOutcome; onDone: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  // Focus moves to the outcome, so the keyboard's next stop is the link to the event (or the way to dismiss it).
  useEffect(() => ref.current?.focus(), [outcome]);
  const { webhook: w, event, error } = outcome;
  const status = error instanceof ApiError ? error.status : 0;
  const why =
    status === 429
      ? 'An address gets at most one test event a minute, whichever endpoint names it: wait, then send again.'
      : status === 409
        ? 'This endpoint is disabled and receives nothing, test events included: enable it first.'
        : status === 404
          ? 'This endpoint no longer exists.'
          : null;
  return (
    // biome-ignore lint/a11y/useSemanticElements: a styled box; the role and label name it for screen readers
    <div
      ref={ref}
      class={`alert ${event ? 'alert-ok' : 'alert-warn'} webhooks-test-result`}
      role="region"
      aria-label={`Test event for ${w.url}`}
      tabIndex={-1}
      data-testid="test-event-result"
    >
      {event ? (
        <p>
          <strong>Test event queued</strong> for <code class="break">{w.url}</code>:{' '}
          <a href={`#/events/${encodeURIComponent(event.id)}`}>
            open {event.type} <code>{event.id}</code>
          </a>{' '}
          to see its payload and delivery attempts.
        </p>
      ) : (
        <>
          <p>
            <strong>No test event was sent</strong> to <code class="break">{w.url}</code>.{why ? ` ${why}` : ''}
          </p>
          <ErrorBox error={error} title="The API refused it" />
        </>
      )}
      <button type="button" class="button" onClick={onDone}>
        Dismiss
      </button>
    </div>
  );
}

export function WebhooksPage() {
  const hooks = useAsync(() => listPage<Webhook>('/v1/webhooks', 'webhooks', { limit: 100 }), []);
  const [deliveryFilter, setDeliveryFilter] = useState('');
  const [extraEvents, setExtraEvents] = useState<{ items: EventItem[]; next: string | null } | null>(null);
  const events = useAsync(async () => {
    setExtraEvents(null);
    return listPage<EventItem>('/v1/events', 'events', { limit: 20, delivery_status: deliveryFilter });
  }, [deliveryFilter]);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [formError, setFormError] = useState<unknown>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const [testOutcome, setTestOutcome] = useState<TestOutcome | null>(null);
  const [testing, setTesting] = useState<string | null>(null);

  const register = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const chosen = [...form.querySelectorAll<HTMLInputElement>('input[name="events"]:checked')].map((i) => i.value);
    setFormError(null);
    setBusy(true);
    try {
      const description = formValue(form, 'description');
      const { data } = await api<IssuedWebhook>('POST', '/v1/webhooks', {
        body: {
          url: formValue(form, 'url'),
          ...(chosen.length > 0 && { events: chosen }),
          ...(description && { description }),
        },
      });
      setSecret({ url: data.url, secret: data.secret });
      form.reset();
      hooks.reload();
    } catch (err) {
      setFormError(err);
    } finally {
      setBusy(false);
    }
  };

  const setStatus = async (w: Webhook, status: 'active' | 'disabled') => {
    setActionError(null);
    try {
      await api('PATCH', `/v1/webhooks/${encodeURIComponent(w.webhook_id)}`, { body: { status } });
      setNotice(`${w.url} is now ${status}.`);
      hooks.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  const remove = async (w: Webhook) => {
    if (!confirm(`Remove the endpoint ${w.url}? It receives nothing more.`)) return;
    setActionError(null);
    try {
      await api('DELETE', `/v1/webhooks/${encodeURIComponent(w.webhook_id)}`);
      setNotice(`${w.url} was removed.`);
      hooks.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  const sendTest = async (w: Webhook) => {
    setActionError(null);
    setTesting(w.webhook_id);
    try {
      const { data } = await api<EventItem>('POST', `/v1/webhooks/${encodeURIComponent(w.webhook_id)}/test`);
      setTestOutcome({ webhook: w, event: data });
      setNotice(`Test event ${data.id} queued for ${w.url}.`);
      events.reload();
    } catch (err) {
      setTestOutcome({ webhook: w, error: err });
    } finally {
      setTesting(null);
    }
  };

  const redeliver = async (ev: EventItem) => {
    setActionError(null);
    try {
      await api('POST', `/v1/events/${encodeURIComponent(ev.id)}/redeliver`);
      setNotice(`Redelivery of ${ev.type} (${ev.id}) queued.`);
      events.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  const loadMoreEvents = async () => {
    const next = extraEvents ? extraEvents.next : (events.data?.next_page_token ?? null);
    try {
      const page = await listPage<EventItem>('/v1/events', 'events', {
        limit: 20,
        delivery_status: deliveryFilter,
        page_token: next,
      });
      setExtraEvents({ items: [...(extraEvents?.items ?? []), ...page.items], next: page.next_page_token });
    } catch (err) {
      setActionError(err);
    }
  };

  const endpoints = hooks.data?.items ?? [];
  const recent = [...(events.data?.items ?? []), ...(extraEvents?.items ?? [])];
  const nextEvents = extraEvents ? extraEvents.next : (events.data?.next_page_token ?? null);

  return (
    <>
      <PageTitle subtitle="Signed deliveries of payroll events to your endpoints (Standard Webhooks), with every attempt.">
        Webhooks
      </PageTitle>
      <p class="sr-only" role="status">
        {notice}
      </p>
      {secret && (
        <SecretOnce
          title={`Signing secret for ${secret.url}`}
          value={secret.secret}
          note="Verify deliveries with it. Copy it now: it will not be shown again."
          onDone={() => setSecret(null)}
        />
      )}

      <section aria-labelledby="endpoints-title">
        <SectionHead titleId="endpoints-title" title="Endpoints" onRefresh={hooks.reload} />
        <ErrorBox error={hooks.error} title="The endpoints could not be loaded" />
        <ErrorBox error={actionError} />
        {testOutcome && <TestEventResult outcome={testOutcome} onDone={() => setTestOutcome(null)} />}
        {hooks.data && endpoints.length === 0 && <p>No endpoint yet: register one below.</p>}
        {endpoints.length > 0 && (
          <TableRegion label="Webhook endpoints">
            <table class="table responsive">
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col">Failures in a row</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {endpoints.map((w) => (
                  <tr key={w.webhook_id}>
                    <td data-label="URL" class="url">
                      <code class="break">{w.url}</code>
                      {w.description && <div class="small muted">{w.description}</div>}
                    </td>
                    <td data-label="Events" class="small">
                      {w.events ? w.events.join(', ') : 'all events'}
                    </td>
                    <td data-label="Status">
                      <StatusBadge status={w.status} />
                    </td>
                    <td data-label="Failures in a row" class="num">
                      {w.consecutive_failures}
                    </td>
                    <td data-label="Created" class="nowrap">
                      <When iso={w.created_at} />
                    </td>
                    <td data-label="Actions" class="actions">
                      <div class="action-stack">
                        <button
                          type="button"
                          class="button"
                          aria-label={`Send test event to ${w.url}`}
                          disabled={testing === w.webhook_id}
                          onClick={() => sendTest(w)}
                        >
                          {testing === w.webhook_id ? 'Sending…' : 'Send test event'}
                        </button>
                        {w.status === 'active' ? (
                          <button
                            type="button"
                            class="button"
                            aria-label={`Disable ${w.url}`}
                            onClick={() => setStatus(w, 'disabled')}
                          >
                            Disable
                          </button>
                        ) : (
                          <button
                            type="button"
                            class="button"
                            aria-label={`Enable ${w.url}`}
                            onClick={() => setStatus(w, 'active')}
                          >
                            Enable
                          </button>
                        )}
                        <button
                          type="button"
                          class="button button-danger"
                          aria-label={`Remove ${w.url}`}
                          onClick={() => remove(w)}
                        >
                          Remove
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
      </section>

      <section aria-labelledby="deliveries-title">
        <div class="section-head">
          <h2 id="deliveries-title">Recent events and deliveries</h2>
          <div class="inline-field">
            <label for="delivery-filter">Deliveries</label>
            <select
              id="delivery-filter"
              class="input input-small"
              value={deliveryFilter}
              onChange={(e) => setDeliveryFilter((e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">all</option>
              {DELIVERY_STATUSES.map((status) => (
                <option key={status} value={status}>
                  {status}
                </option>
              ))}
            </select>
            <button type="button" class="button" onClick={events.reload}>
              Refresh
            </button>
          </div>
        </div>
        <p class="small">
          Open an event for its payload and every attempt, or see them all in{' '}
          <a href="#/events">Integrations → Events</a>.
        </p>
        <ErrorBox error={events.error} title="The events could not be loaded" />
        {events.data && recent.length === 0 && <p>No event matches.</p>}
        {recent.length > 0 && (
          <TableRegion label="Recent events">
            <table class="table responsive" data-testid="event-table">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Time</th>
                  <th scope="col">Deliveries</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {recent.map((ev) => (
                  <tr key={ev.id}>
                    <td data-label="Event">
                      <strong>{ev.type}</strong>
                      <div class="small muted">
                        <a href={`#/events/${encodeURIComponent(ev.id)}`}>
                          <code>{ev.id}</code>
                        </a>
                        {ev.payroll_id && (
                          <>
                            {' '}
                            · <a href={`#/payrolls/${ev.payroll_id}`}>{ev.payroll_id}</a>
                          </>
                        )}
                      </div>
                    </td>
                    <td data-label="Time" class="nowrap">
                      <When iso={ev.timestamp} />
                    </td>
                    <td data-label="Deliveries" class="deliveries">
                      {ev.deliveries.length === 0 ? (
                        <span class="muted">{NOT_DELIVERED}</span>
                      ) : (
                        <ul class="plain">
                          {ev.deliveries.map((d) => (
                            <li key={d.webhook_id}>
                              <StatusBadge status={d.status} /> <code class="small break">{d.url}</code>
                              <div class="small muted">
                                {d.attempts.length} attempt{d.attempts.length === 1 ? '' : 's'}; last: {lastAttempt(d)}
                              </div>
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                    <td data-label="Actions" class="actions">
                      <button
                        type="button"
                        class="button"
                        aria-label={`Redeliver ${ev.type} ${ev.id}`}
                        onClick={() => redeliver(ev)}
                      >
                        Redeliver
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
        <LoadMore next={nextEvents} loading={events.loading} onClick={loadMoreEvents} label="Load older events" />
      </section>

      <section class="card" aria-labelledby="register-title">
        <h2 id="register-title">Register an endpoint</h2>
        <ErrorBox error={formError} title="The endpoint was not registered" />
        <form onSubmit={register}>
          <div class="form-grid">
            <Field id="hook-url" label="URL" hint="https:// and a public address.">
              <input
                id="hook-url"
                name="url"
                type="url"
                class="input"
                required
                placeholder="https://hooks.example.com/payroll"
                aria-describedby="hook-url-hint"
              />
            </Field>
            <Field id="hook-description" label="Description (optional)">
              <input id="hook-description" name="description" class="input" maxLength={500} />
            </Field>
          </div>
          <fieldset class="checks">
            <legend>Events (none checked: every event)</legend>
            {SUBSCRIBABLE_EVENT_TYPES.map((t) => (
              <label key={t} class="check">
                <input type="checkbox" name="events" value={t} /> {t}
              </label>
            ))}
          </fieldset>
          <div class="form-actions">
            <button type="submit" class="button button-primary" disabled={busy}>
              {busy ? 'Registering…' : 'Register endpoint'}
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
