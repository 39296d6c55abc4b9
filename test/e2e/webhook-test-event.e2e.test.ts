import { SQSClient } from '@aws-sdk/client-sqs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemDeps } from '../../shared/adapters/clock.js';
import { Queue } from '../../shared/adapters/queue.js';
import { EventRepository } from '../../shared/data/event-repository.js';
import { WebhookRepository } from '../../shared/data/webhook-repository.js';
import {
  type EventServices,
  resumePendingDeliveries,
  resumeUndispatchedEvents,
} from '../../shared/use-cases/events.js';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { seedClients } from '../support/seed.js';
import { typedClient, type components, type operations, type TypedClient } from '../support/typed-client.js';
import { startReceiver, type Received } from '../support/webhook-receiver.js';

/**
 * `POST /v1/webhooks/{id}/test` over HTTPS against the local stack, called through the client typed from the
 * OpenAPI document (every answer is also checked against the document): a signed `webhook.test` event for the one
 * endpoint named, whatever its `events` list; at most one per endpoint per minute; a paused (`unreliable`)
 * endpoint gets it, a disabled one does not; it is in the event log with its delivery and attempts; neither the
 * sweeper nor a redelivery ever sends it to another endpoint.
 */
type Event = components['schemas']['Event'];
type NewWebhook = operations['createWebhook']['requestBody']['content']['application/json'];

let stack: RunningStack;
let seq = 0;

const at = (id: string) => ({ params: { path: { id } } });

async function organization() {
  const org = await stack.createOrganization(`Test events ${seq++}`);
  return { token: org.token, api: typedClient(stack, org.token) };
}

async function register(api: TypedClient, url: string, extra: Partial<NewWebhook> = {}) {
  const res = await api.POST('/v1/webhooks', { body: { url, ...extra } });
  expect(res.response.status).toBe(201);
  return res.data!.data;
}

async function sendTest(api: TypedClient, webhookId: string) {
  return api.POST('/v1/webhooks/{id}/test', at(webhookId));
}

async function getEvent(api: TypedClient, id: string): Promise<Event> {
  const res = await api.GET('/v1/events/{id}', at(id));
  expect(res.response.status).toBe(200);
  return res.data!.data;
}

/** The event once its delivery to `webhookId` is no longer pending. */
function settled(api: TypedClient, id: string, webhookId: string): Promise<Event> {
  return vi.waitFor(
    async () => {
      const e = await getEvent(api, id);
      const d = e.deliveries.find((x) => x.webhook_id === webhookId);
      if (!d || d.status === 'pending') throw new Error(`the delivery of ${id} to ${webhookId} is still pending`);
      return e;
    },
    { timeout: 20_000, interval: 50 },
  );
}

const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as {
    id: string;
    type: string;
    timestamp: string;
    data: Record<string, unknown>;
  };

const allTestEvents = async (api: TypedClient) =>
  (await api.GET('/v1/events', { params: { query: { type: 'webhook.test', limit: 100 } } })).data!.data.events;

let period = 0;
function payroll(employeeId: string): components['schemas']['PayrollSubmission'] {
  const start = new Date(Date.UTC(2026, 2, 1 + 14 * period++));
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return {
    pay_period_start: iso(start),
    pay_period_end: iso(new Date(start.getTime() + 13 * 86_400_000)),
    pay_date: iso(new Date(start.getTime() + 18 * 86_400_000)),
    employees: [{ employee_id: employeeId, gross_pay: 1000, hours_worked: 40 }],
  };
}

beforeAll(async () => {
  stack = await startLocalStack({ env: { PAYROLL_WEBHOOK_RETRY_DELAYS_S: '1,1' } });
});

afterAll(async () => {
  await stack?.stop();
});

describe('POST /v1/webhooks/{id}/test', () => {
  it('sends a signed webhook.test to the named endpoint alone, whatever its events list; logged, redeliverable to it only', async () => {
    const { api } = await organization();
    const named = await startReceiver();
    const other = await startReceiver();
    // Subscribed to an event type nothing here raises, and to every type: neither list decides where a test goes.
    const hook = await register(api, named.url, { events: ['payroll.failed'], description: 'named' });
    const everything = await register(api, other.url, { description: 'all events' });

    const sent = await sendTest(api, hook.webhook_id);
    expect(sent.response.status).toBe(202);
    expect(sent.data!.message).toBe('Test event queued');
    const queued = sent.data!.data;
    expect(queued).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      type: 'webhook.test',
      payroll_id: null,
      data: { test: true, webhook_id: hook.webhook_id, url: hook.url, message: expect.any(String) },
      deliveries: [{ webhook_id: hook.webhook_id, url: hook.url, status: 'pending', attempts: [] }],
    });

    // Signed with the endpoint's secret (Standard Webhooks), the webhook-id being the event id; not the other's.
    const [delivery] = await named.waitFor((r) => r.length >= 1);
    const payload = verify(hook.secret, delivery!);
    expect(payload).toEqual({ id: queued.id, type: 'webhook.test', timestamp: queued.timestamp, data: queued.data });
    expect(delivery!.headers['webhook-id']).toBe(queued.id);
    expect(() => verify(everything.secret, delivery!)).toThrow();

    // In the log, with its delivery and the attempt's status and response time.
    const logged = await settled(api, queued.id, hook.webhook_id);
    expect(logged.deliveries).toEqual([
      {
        webhook_id: hook.webhook_id,
        url: hook.url,
        status: 'succeeded',
        attempts: [{ at: expect.any(String), status_code: 200, latency_ms: expect.any(Number), error: null }],
      },
    ]);
    expect(logged.deliveries[0]!.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(0);
    const listed = await api.GET('/v1/events', { params: { query: { type: 'webhook.test' } } });
    expect(listed.data!.data.events).toEqual([logged]);
    const succeeded = await api.GET('/v1/events', { params: { query: { delivery_status: 'succeeded' } } });
    expect(succeeded.data!.data.events.map((e) => e.id)).toContain(queued.id);

    // A redelivery goes to the named endpoint again (same webhook-id), and still to no other.
    const again = await api.POST('/v1/events/{id}/redeliver', at(queued.id));
    expect(again.response.status).toBe(202);
    expect(again.data!.data.deliveries.map((d) => [d.webhook_id, d.status])).toEqual([[hook.webhook_id, 'pending']]);
    const both = await named.waitFor((r) => r.length >= 2);
    expect(both[1]!.headers['webhook-id']).toBe(queued.id);
    expect(verify(hook.secret, both[1]!).type).toBe('webhook.test');
    const redelivered = await settled(api, queued.id, hook.webhook_id);
    expect(redelivered.deliveries).toHaveLength(1);
    expect(redelivered.deliveries[0]!.attempts.map((a) => a.status_code)).toEqual([200, 200]);
    expect(other.received).toEqual([]);
    expect(named.received).toHaveLength(2);
    await Promise.all([named.close(), other.close()]);
  });

  it('allows one per address per minute: 429 with Retry-After, one winner among racing requests, other addresses unaffected', async () => {
    const { api } = await organization();
    const receiver = await startReceiver();
    const elsewhere = await startReceiver();
    const first = await register(api, receiver.url, { description: 'first' });
    const second = await register(api, elsewhere.url, { description: 'second' });
    // A test event is sent, never subscribed to: an endpoint's list may not name it.
    const subscribing = await api.POST('/v1/webhooks', {
      body: { url: elsewhere.url, events: ['webhook.test'] as unknown as NewWebhook['events'] },
    });
    expect(subscribing.response.status).toBe(400);
    expect(subscribing.error!.error.details).toEqual([expect.objectContaining({ field: 'events[0]' })]);

    const race = await Promise.all(Array.from({ length: 6 }, () => sendTest(api, first.webhook_id)));
    const statuses = race.map((r) => r.response.status).sort();
    expect(statuses).toEqual([202, 429, 429, 429, 429, 429]);
    const refused = race.find((r) => r.response.status === 429)!;
    expect(refused.error!.error).toMatchObject({
      code: 'rate_limited',
      details: [expect.objectContaining({ code: 'rate_limited' })],
    });
    const wait = Number(refused.response.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);

    const tooSoon = await sendTest(api, first.webhook_id);
    expect(tooSoon.response.status).toBe(429);
    // The limit is the address's: another endpoint of the organization, elsewhere, may be tested at once; one more
    // endpoint on the same address, or the first one deleted and registered again, may not.
    expect((await sendTest(api, second.webhook_id)).response.status).toBe(202);
    const sameAddress = await register(api, receiver.url, { description: 'same address' });
    expect((await sendTest(api, sameAddress.webhook_id)).response.status).toBe(429);
    expect(
      (await api.DELETE('/v1/webhooks/{id}', { params: { path: { id: first.webhook_id } } })).response.status,
    ).toBe(200);
    const again = await register(api, receiver.url, { description: 'registered again' });
    expect((await sendTest(api, again.webhook_id)).response.status).toBe(429);
    // Nor does another path or query of the same host and port.
    const moved = await api.PATCH('/v1/webhooks/{id}', {
      ...at(again.webhook_id),
      body: { url: `${receiver.url.replace(/\/?$/, '')}/other?n=2` },
    });
    expect(moved.response.status).toBe(200);
    expect((await sendTest(api, again.webhook_id)).response.status).toBe(429);

    // Exactly one event per accepted request, each to its own endpoint.
    const events = await allTestEvents(api);
    expect(events.map((e) => e.deliveries.map((d) => d.webhook_id)).sort()).toEqual(
      [[first.webhook_id], [second.webhook_id]].sort(),
    );
    await receiver.waitFor((r) => r.length >= 1);
    await elsewhere.waitFor((r) => r.length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(1);
    await Promise.all([receiver.close(), elsewhere.close()]);
  });

  it('reaches an endpoint paused as unreliable; its skipped events have no delivery; a disabled one gets 409', {
    timeout: 60_000,
  }, async () => {
    const { api } = await organization();
    const employee = await api.POST('/v1/employees', {
      body: {
        first_name: 'Paula',
        last_name: 'Paused',
        email: `paula${seq}@example.com`,
        employment_type: 'full_time',
        pay_group: 'default',
        pay_schedule: 'biweekly',
        start_date: '2026-01-05',
        bank_account: { account_number: '24681357', routing_number: '021000021', account_type: 'checking' },
      },
    });
    const employeeId = employee.data!.data.employee_id;
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? 200 : 500));
    const hook = await register(api, receiver.url, { events: ['payroll.submitted'] });
    // Five failed events in a row pause it.
    for (let i = 0; i < 5; i++)
      expect((await api.POST('/v1/payroll', { body: payroll(employeeId) })).response.status).toBe(202);
    await receiver.waitFor((r) => r.length >= 15, 30_000);
    await vi.waitFor(
      async () => {
        const status = (await api.GET('/v1/webhooks/{id}', at(hook.webhook_id))).data!.data.status;
        expect(status, `webhook ${hook.webhook_id} marked unreliable`).toBe('unreliable');
      },
      { timeout: 10_000, interval: 50 },
    );

    // An event while it is paused: recorded, with no delivery (the endpoint was not active when it happened).
    const skippedRun = await api.POST('/v1/payroll', { body: payroll(employeeId) });
    expect(skippedRun.response.status).toBe(202);
    const skipped = (await api.GET('/v1/events', { params: { query: { type: 'payroll.submitted', limit: 1 } } })).data!
      .data.events[0]!;
    expect(skipped.deliveries).toEqual([]);

    // The test event still reaches it: the way to check a fixed receiver before re-enabling the endpoint.
    healthy = true;
    const before = receiver.received.length;
    const sent = await sendTest(api, hook.webhook_id);
    expect(sent.response.status).toBe(202);
    const arrived = await receiver.waitFor((r) => r.length > before);
    expect(verify(hook.secret, arrived.at(-1)!)).toMatchObject({ id: sent.data!.data.id, type: 'webhook.test' });
    const logged = await settled(api, sent.data!.data.id, hook.webhook_id);
    expect(logged.deliveries[0]).toMatchObject({ status: 'succeeded', attempts: [{ status_code: 200 }] });
    // Its success resets the failure count; the endpoint stays paused until set active.
    expect((await api.GET('/v1/webhooks/{id}', at(hook.webhook_id))).data!.data).toMatchObject({
      status: 'unreliable',
      consecutive_failures: 0,
    });

    // A disabled endpoint receives nothing, test events included: 409, and no event is recorded.
    const disabled = await api.PATCH('/v1/webhooks/{id}', { ...at(hook.webhook_id), body: { status: 'disabled' } });
    expect(disabled.data!.data.status).toBe('disabled');
    const refused = await sendTest(api, hook.webhook_id);
    expect(refused.response.status).toBe(409);
    expect(refused.error!.error).toMatchObject({
      code: 'conflict',
      message: 'The webhook endpoint is disabled',
      details: [expect.objectContaining({ field: 'status', code: 'webhook_disabled' })],
    });
    expect((await allTestEvents(api)).map((e) => e.id)).toEqual([sent.data!.data.id]);

    // Unknown, or another organization's: 404 alike.
    const unknown = await sendTest(api, `${hook.webhook_id.slice(0, -1)}${hook.webhook_id.endsWith('0') ? '1' : '0'}`);
    expect(unknown.response.status).toBe(404);
    const stranger = await organization();
    const foreign = await sendTest(stranger.api, hook.webhook_id);
    expect(foreign.response.status).toBe(404);
    expect(foreign.error!.error).toEqual(unknown.error!.error);
    await receiver.close();
  });

  it("counts a failed test event toward the endpoint's consecutive failures, after three attempts", async () => {
    const { api } = await organization();
    const receiver = await startReceiver(() => 503);
    const hook = await register(api, receiver.url);
    const sent = await sendTest(api, hook.webhook_id);
    expect(sent.response.status).toBe(202);
    const failed = await settled(api, sent.data!.data.id, hook.webhook_id);
    expect(failed.deliveries[0]!.status).toBe('failed');
    expect(failed.deliveries[0]!.attempts.map((a) => a.status_code)).toEqual([503, 503, 503]);
    expect(failed.deliveries[0]!.attempts[0]!.error).toContain('HTTP 503');
    const failing = await api.GET('/v1/events', {
      params: { query: { type: 'webhook.test', delivery_status: 'failed' } },
    });
    expect(failing.data!.data.events.map((e) => e.id)).toEqual([sent.data!.data.id]);
    expect((await api.GET('/v1/webhooks/{id}', at(hook.webhook_id))).data!.data.consecutive_failures).toBe(1);
    await receiver.close();
  });
});

describe('the sweeper and a test event', () => {
  it('never fans it out to other endpoints; re-sends its pending delivery to its own endpoint only', async () => {
    const { api } = await organization();
    const named = await startReceiver(() => 503);
    const other = await startReceiver();
    const hook = await register(api, named.url, { events: ['payroll.failed'] });
    await register(api, other.url, { description: 'every event' });
    const sent = await sendTest(api, hook.webhook_id);
    expect(sent.response.status).toBe(202);
    const id = sent.data!.data.id;
    await named.waitFor((r) => r.length >= 1);

    // What the sweeper's handler runs (functions/processor/resume-stuck-payrolls.ts), against the stack's own table
    // and queue, with cutoffs in the future: every event still in the outbox is fanned out, every pending delivery
    // is taken for lost and sent again.
    const { table } = seedClients(stack);
    const sweeper: EventServices = {
      events: new EventRepository(table),
      webhooks: new WebhookRepository(table),
      webhookQueue: new Queue(
        new SQSClient({
          endpoint: stack.state.sqs_endpoint,
          region: stack.state.region,
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }),
        stack.state.queues.webhooks,
      ),
      deps: systemDeps,
    };
    const future = new Date(Date.now() + 3600_000);
    await resumeUndispatchedEvents(sweeper, future);
    const { resent } = await resumePendingDeliveries(sweeper, future, new Date());
    expect(resent).toBeGreaterThanOrEqual(1);

    const done = await settled(api, id, hook.webhook_id);
    expect(done.deliveries.map((d) => [d.webhook_id, d.status])).toEqual([[hook.webhook_id, 'failed']]);
    await new Promise((r) => setTimeout(r, 500));
    expect(named.received.length).toBeGreaterThanOrEqual(3);
    expect(new Set(named.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([id]));
    expect(other.received).toEqual([]);
    await Promise.all([named.close(), other.close()]);
  });
});
