import { useState } from 'preact/hooks';
import { api, type Query } from '../api.js';
import { DELIVERY_STATUSES, EVENT_TYPES, type EventItem } from '../types.js';
import { loadNames } from './runs-model.js';
import {
  CopyButton,
  ErrorBox,
  Field,
  FilterForm,
  formatDateTime,
  formValue,
  HttpStatus,
  LoadMore,
  PageTitle,
  SectionHead,
  StatusBadge,
  TableRegion,
  useAsync,
  useLiveResource,
  usePagedList,
  When,
} from '../ui.js';

type Delivery = EventItem['deliveries'][number];
type Attempt = Delivery['attempts'][number];

/**
 * What an event without deliveries means (the API's `deliveries` description): no endpoint was `active` and
 * subscribed to its type when it happened. Endpoints may well have existed, paused as unreliable or disabled.
 */
export const NOT_DELIVERED = 'Not delivered: no active endpoint was subscribed when it happened';

const eventPath = (id: string) => `#/events/${encodeURIComponent(id)}`;

/** An attempt's moment to the second: retries may be seconds apart. */
const toTheSecond = new Intl.DateTimeFormat('en-US', {
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
});
function AttemptTime({ iso }: { iso: string }) {
  const d = new Date(iso);
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {Number.isNaN(d.getTime()) ? iso : toTheSecond.format(d)}
    </time>
  );
}

/** An attempt in a few words: the receiver's status (or the error when none came), its response time, when. */
export function attemptSummary(a: Attempt): string {
  const outcome = a.status_code !== null ? `HTTP ${a.status_code}` : (a.error ?? 'no answer');
  return `${outcome}, ${a.latency_ms} ms, ${formatDateTime(a.at, true)}`;
}

/** The endpoint a `webhook.test` event was sent to, from its data. */
function testTarget(e: EventItem): string | null {
  if (e.type !== 'webhook.test') return null;
  const url = (e.data as { url?: unknown }).url;
  return typeof url === 'string' ? url : null;
}

/** The events the organization's webhooks carry, filterable by type and delivery status, newest first. */
export function EventsPage() {
  const [filters, setFilters] = useState<Query>({});
  const {
    first,
    items: events,
    next,
    loadMore,
    moreLoading,
    moreError,
  } = usePagedList<EventItem>('/v1/events', 'events', filters, 25);

  const apply = (form: HTMLFormElement) =>
    setFilters({ type: formValue(form, 'type'), delivery_status: formValue(form, 'delivery_status') });

  return (
    <>
      <PageTitle subtitle="Every event sent to your webhook endpoints, newest first: open one for its payload and every delivery attempt.">
        Events
      </PageTitle>

      <FilterForm titleId="event-filters-title" onApply={apply} onClear={() => setFilters({})}>
        <Field id="event-type" label="Type">
          <select id="event-type" name="type" class="input">
            <option value="">Any type</option>
            {EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </Field>
        <Field id="event-delivery" label="Delivery status">
          <select id="event-delivery" name="delivery_status" class="input">
            <option value="">Any status</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s === 'failed' ? 'failed (to some endpoint)' : s === 'pending' ? 'pending (to some endpoint)' : s}
              </option>
            ))}
          </select>
        </Field>
      </FilterForm>

      <section aria-labelledby="event-list-title">
        <SectionHead titleId="event-list-title" title="Events" onRefresh={first.reload} refreshing={first.loading} />
        <ErrorBox error={first.error} title="The events could not be loaded" />
        <ErrorBox error={moreError} />
        <p class="sr-only" aria-live="polite">
          {first.loading ? 'Loading events…' : `${events.length} events shown`}
        </p>
        {first.data && events.length === 0 && <p>No event matches these filters.</p>}
        {events.length > 0 && (
          <TableRegion label="Events">
            <table class="table responsive" data-testid="events-table">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Time</th>
                  <th scope="col">Deliveries</th>
                </tr>
              </thead>
              <tbody>
                {events.map((e) => (
                  <tr key={e.id}>
                    <td data-label="Event" class="events-event">
                      <a href={eventPath(e.id)}>
                        <strong>{e.type}</strong>
                      </a>
                      <div class="small muted">
                        <code class="break">{e.id}</code>
                      </div>
                      {testTarget(e) && (
                        <div class="small muted">
                          Test for <code class="break">{testTarget(e)}</code>
                        </div>
                      )}
                      {e.payroll_id && (
                        <div class="small">
                          Run <a href={`#/payrolls/${encodeURIComponent(e.payroll_id)}`}>{e.payroll_id}</a>
                        </div>
                      )}
                    </td>
                    <td data-label="Time" class="nowrap">
                      <When iso={e.timestamp} />
                    </td>
                    <td data-label="Deliveries" class="deliveries">
                      <DeliverySummary deliveries={e.deliveries} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
        <LoadMore next={next} loading={moreLoading} onClick={loadMore} label="Load older events" />
      </section>
    </>
  );
}

function DeliverySummary({ deliveries }: { deliveries: Delivery[] }) {
  if (deliveries.length === 0) return <span class="muted">{NOT_DELIVERED}</span>;
  return (
    <ul class="plain">
      {deliveries.map((d) => {
        const last = d.attempts[d.attempts.length - 1];
        return (
          <li key={d.webhook_id}>
            <StatusBadge status={d.status} /> <code class="small break">{d.url}</code>
            <div class="small muted">
              {d.attempts.length} attempt{d.attempts.length === 1 ? '' : 's'}
              {last ? `; last: ${attemptSummary(last)}` : ''}
            </div>
          </li>
        );
      })}
    </ul>
  );
}

/** Whether a delivery of the event is still under way. */
const isPending = (e: EventItem) => e.deliveries.some((d) => d.status === 'pending');

/** The employee an event is about (`payment.returned`, `employee.bank_account_corrected`), if any. */
function employeeOf(event: EventItem): string | null {
  const id = (event.data as { employee_id?: unknown }).employee_id;
  return typeof id === 'string' ? id : null;
}

/** One event: its payload as receivers get it, every delivery with every attempt, and a redelivery. */
export function EventDetailPage({ eventId }: { eventId: string }) {
  const path = `/v1/events/${encodeURIComponent(eventId)}`;
  // While a delivery is pending its attempts are still coming: the event is read again every second.
  const { data: event, set: setLive, loaded, pollError } = useLiveResource<EventItem>(path, isPending);
  const [actionError, setActionError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  // A returned deposit or a corrected account is about a person: named, not only by id.
  const about = event ? employeeOf(event) : null;
  const names = useAsync(() => (about ? loadNames([about]) : Promise.resolve(new Map<string, string>())), [about]);
  const pending = event ? isPending(event) : false;

  const redeliver = async () => {
    setActionError(null);
    setNotice('');
    setBusy(true);
    try {
      const { data } = await api<EventItem>('POST', `${path}/redeliver`);
      setLive(data);
      setNotice(
        data.deliveries.length === 0
          ? 'Redelivery queued, but no endpoint is subscribed to this type now: nothing was sent.'
          : `Redelivery queued to ${data.deliveries.length} endpoint${data.deliveries.length === 1 ? '' : 's'}.`,
      );
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <p class="breadcrumb">
        <a href="#/events">Events</a> <span aria-hidden="true">›</span> <code class="break">{eventId}</code>
      </p>
      <PageTitle>Event</PageTitle>
      <ErrorBox error={loaded.error} title="The event could not be loaded" />
      <ErrorBox error={pollError} title="Refreshing the event failed (retrying)" />
      {!event && loaded.loading && <p aria-live="polite">Loading…</p>}
      {event && (
        <>
          <section class="card" aria-labelledby="event-summary-title">
            <h2 id="event-summary-title" class="sr-only">
              Summary
            </h2>
            <div class="events-head">
              <div class="run-status">
                <strong class="events-type" data-testid="event-type">
                  {event.type}
                </strong>
                {pending && <StatusBadge status="pending" />}
              </div>
              <button
                type="button"
                class="button button-primary"
                onClick={redeliver}
                disabled={busy}
                aria-describedby="redeliver-hint"
              >
                {busy ? 'Redelivering…' : 'Redeliver'}
              </button>
            </div>
            <dl class="facts events-facts">
              <div>
                <dt>Event id (the webhook-id header)</dt>
                <dd class="break">
                  <code>{event.id}</code>
                </dd>
              </div>
              <div>
                <dt>Time</dt>
                <dd>{formatDateTime(event.timestamp)}</dd>
              </div>
              {event.payroll_id && (
                <div>
                  <dt>Payroll run</dt>
                  <dd class="break">
                    <a href={`#/payrolls/${encodeURIComponent(event.payroll_id)}`}>{event.payroll_id}</a>
                  </dd>
                </div>
              )}
              {employeeOf(event) && (
                <div>
                  <dt>Employee</dt>
                  <dd class="break" data-testid="event-employee">
                    <a href={`#/employees/${encodeURIComponent(employeeOf(event)!)}`}>
                      {names.data?.get(employeeOf(event)!) ?? employeeOf(event)}
                    </a>
                  </dd>
                </div>
              )}
              {testTarget(event) && (
                <div>
                  <dt>Test event for</dt>
                  <dd class="break">
                    <code>{testTarget(event)}</code>
                  </dd>
                </div>
              )}
            </dl>
            <p class="small muted events-hint" id="redeliver-hint">
              {event.type === 'webhook.test'
                ? 'Redeliver sends this test again with the same webhook-id, to the endpoint it was sent to only. At most once a minute.'
                : 'Redeliver sends it again with the same webhook-id: to every endpoint it went to, or, if none, to the endpoints subscribed to its type now. At most once a minute.'}
            </p>
            <ErrorBox error={actionError} title="The event was not redelivered" />
            <p role="status" class={notice ? 'alert alert-ok' : 'sr-only'}>
              {notice}
            </p>
          </section>

          <section aria-labelledby="payload-title">
            <div class="section-head">
              <h2 id="payload-title">Payload</h2>
              <CopyButton text={JSON.stringify(payloadOf(event), null, 2)} label="Copy the payload" />
            </div>
            <p class="small muted">The JSON body each endpoint receives, signed with its secret (Standard Webhooks).</p>
            <pre class="events-payload" data-testid="event-payload">
              <code>{JSON.stringify(payloadOf(event), null, 2)}</code>
            </pre>
          </section>

          <section aria-labelledby="deliveries-title">
            <h2 id="deliveries-title">Deliveries</h2>
            {event.deliveries.length === 0 ? (
              <p class="alert alert-info" data-testid="not-delivered">
                <strong>{NOT_DELIVERED}.</strong> Endpoints paused as unreliable or disabled get no new events;
                Redeliver sends it to the endpoints subscribed to its type now.
              </p>
            ) : (
              event.deliveries.map((d, i) => <DeliveryCard key={d.webhook_id} delivery={d} index={i} />)
            )}
          </section>
        </>
      )}
    </>
  );
}

/** What receivers get: the event without its delivery bookkeeping. */
const payloadOf = (e: EventItem) => ({ id: e.id, type: e.type, timestamp: e.timestamp, data: e.data });

function DeliveryCard({ delivery: d, index }: { delivery: Delivery; index: number }) {
  const titleId = `delivery-${index}-title`;
  return (
    <section class="card events-delivery" aria-labelledby={titleId} data-testid="delivery">
      <h3 id={titleId} class="events-delivery-title">
        <StatusBadge status={d.status} /> <code class="break">{d.url}</code>
      </h3>
      <p class="small muted">
        Endpoint <code class="break">{d.webhook_id}</code> ·{' '}
        {d.attempts.length === 0
          ? 'not tried yet'
          : `${d.attempts.length} attempt${d.attempts.length === 1 ? '' : 's'}`}
      </p>
      {d.attempts.length > 0 && (
        <TableRegion label={`Attempts to ${d.url}`}>
          <table class="table responsive" data-testid="attempts">
            <thead>
              <tr>
                <th scope="col" class="num">
                  #
                </th>
                <th scope="col">Time</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Response time
                </th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {d.attempts.map((a, n) => (
                <tr key={n}>
                  <td data-label="#" class="num">
                    {n + 1}
                  </td>
                  <td data-label="Time" class="nowrap">
                    <AttemptTime iso={a.at} />
                  </td>
                  <td data-label="Status">
                    {a.status_code !== null ? <HttpStatus status={a.status_code} /> : <span>no answer</span>}
                  </td>
                  <td data-label="Response time" class="num">
                    {a.latency_ms} ms
                  </td>
                  <td data-label="Error" class="events-error">
                    {a.error ?? <span class="muted">—</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </section>
  );
}
