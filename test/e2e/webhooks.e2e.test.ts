import { GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import {
  asReceived,
  typedClient,
  type components,
  type operations,
  type TypedClient,
} from '../support/typed-client.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * Webhooks and the event log over the local stack, called through the client typed from the OpenAPI document.
 * `stack.request` remains only for an event type the document does not list: hostile input the typed client
 * cannot express.
 */
let stack: RunningStack;
let seq = 0;

type NewWebhook = operations['createWebhook']['requestBody']['content']['application/json'];

/** The path parameter of `/v1/…/{id}`. */
const at = (id: string) => ({ params: { path: { id } } });

async function organization() {
  const org = await stack.createOrganization(`Hooks ${seq++}`);
  const api = typedClient(stack, org.token);
  const emp = await api.POST('/v1/employees', {
    body: {
      first_name: 'Wanda',
      last_name: 'Hook',
      email: `wanda${seq}@example.com`,
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2026-01-05',
      bank_account: { account_number: '24681357', routing_number: '021000021', account_type: 'checking' },
    },
  });
  return { token: org.token, api, employeeId: emp.data!.data.employee_id };
}

let period = 0;
function payroll(
  employeeId: string,
  extra: Partial<components['schemas']['PayrollSubmission']> = {},
): components['schemas']['PayrollSubmission'] {
  const start = new Date(Date.UTC(2026, 2, 1 + 14 * period++));
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return {
    pay_period_start: iso(start),
    pay_period_end: iso(new Date(start.getTime() + 13 * 86_400_000)),
    pay_date: iso(new Date(start.getTime() + 18 * 86_400_000)),
    employees: [{ employee_id: employeeId, gross_pay: 1000, hours_worked: 40 }],
    ...extra,
  };
}

async function register(api: TypedClient, url: string, extra: Partial<NewWebhook> = {}) {
  const res = await api.POST('/v1/webhooks', { body: { url, ...extra } });
  expect(res.response.status).toBe(201);
  return res.data!.data;
}

/** The run a submission answered with (a dry run's 200 carries no payroll_id). */
async function submit(api: TypedClient, body: components['schemas']['PayrollSubmission']) {
  const res = await api.POST('/v1/payroll', { body });
  const data = res.data?.data;
  if (!data || !('payroll_id' in data)) throw new Error(`not an accepted submission: ${JSON.stringify(res.error)}`);
  return data;
}

beforeAll(async () => {
  stack = await startLocalStack({ env: { PAYROLL_WEBHOOK_RETRY_DELAYS_S: '1,1' } });
});

afterAll(async () => {
  await stack?.stop();
});

describe('webhooks over the local stack', () => {
  it('delivers the documented sequence, each event signed and verifiable', async () => {
    const { api, employeeId } = await organization();
    const receiver = await startReceiver();
    const hook = await register(api, receiver.url, { description: 'ledger sync' });
    expect(hook.secret).toMatch(/^whsec_/);
    const payrollId = (await submit(api, payroll(employeeId))).payroll_id;
    const all = await receiver.waitFor((r) => r.length >= 6);
    const verifier = new Webhook(hook.secret);
    const events = all.map(
      (r) =>
        verifier.verify(r.body, r.headers as Record<string, string>) as {
          id: string;
          type: string;
          timestamp: string;
          data: { payroll_id: string };
        },
    );
    expect(all.map((r) => r.headers['webhook-id'])).toEqual(events.map((e) => e.id));
    const inOrder = [...events].sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id));
    expect(inOrder.map((e) => e.type)).toEqual([
      'payroll.submitted',
      'payroll.processing',
      'payroll.approved',
      'payroll.processed',
      'payroll.completed',
      'paystub.generated',
    ]);
    expect(events.every((e) => e.data.payroll_id === payrollId)).toBe(true);
    expect(() =>
      verifier.verify(all[0]!.body.replace('payroll', 'Payroll'), all[0]!.headers as Record<string, string>),
    ).toThrow();

    const listed = await api.GET('/v1/events', { params: { query: { payroll_id: payrollId } } });
    expect(listed.data!.data.events.map((e) => e.type)).toEqual([...inOrder].reverse().map((e) => e.type));
    for (const e of listed.data!.data.events) {
      expect(e.deliveries).toEqual([
        expect.objectContaining({
          webhook_id: hook.webhook_id,
          status: 'succeeded',
          attempts: [expect.objectContaining({ status_code: 200, error: null })],
        }),
      ]);
    }
    await receiver.close();
  });

  it('delivers on the third attempt to a receiver that fails twice', async () => {
    const { api, employeeId } = await organization();
    const receiver = await startReceiver((_r, i) => (i < 2 ? 503 : 200));
    await register(api, receiver.url, { events: ['payroll.submitted'] });
    await submit(api, payroll(employeeId));
    const all = await receiver.waitFor((r) => r.length >= 3);
    expect(new Set(all.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const [event] = (await api.GET('/v1/events', { params: { query: { type: 'payroll.submitted' } } })).data!.data
      .events;
    expect(event!.deliveries[0]!.status).toBe('succeeded');
    expect(event!.deliveries[0]!.attempts.map((a) => a.status_code)).toEqual([503, 503, 200]);
    expect(all[2]!.at - all[0]!.at).toBeGreaterThanOrEqual(1500);
    await receiver.close();
  });

  it('records a failed delivery after three failures, acknowledges the message, and can redeliver', async () => {
    const { api, employeeId } = await organization();
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? 200 : 500));
    await register(api, receiver.url, { events: ['payroll.submitted'] });
    await submit(api, payroll(employeeId));
    await receiver.waitFor((r) => r.length >= 3);
    const failedEvent = async () =>
      (await api.GET('/v1/events', { params: { query: { type: 'payroll.submitted', delivery_status: 'failed' } } }))
        .data!.data.events[0];
    const event: components['schemas']['Event'] = await vi.waitFor(
      async () => {
        const found = await failedEvent();
        if (!found) throw new Error('no payroll.submitted event with a failed delivery within 10000 ms');
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(event.deliveries[0]).toMatchObject({
      status: 'failed',
      attempts: [{ status_code: 500 }, { status_code: 500 }, { status_code: 500 }],
    });
    expect(event.deliveries[0]!.attempts[0]!.error).toContain('HTTP 500');

    const sqs = new SQSClient({
      endpoint: stack.state.sqs_endpoint,
      region: stack.state.region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    // The third failure acknowledged the message: the queue empties (nothing waiting, nothing in flight) with no
    // fourth POST, and nothing reaches the dead-letter queue.
    await vi.waitFor(
      async () => {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: stack.state.queues.webhooks,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        expect(Attributes).toMatchObject({
          ApproximateNumberOfMessages: '0',
          ApproximateNumberOfMessagesNotVisible: '0',
        });
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(receiver.received).toHaveLength(3);
    const dead = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: stack.state.queues.webhooks_dlq,
        WaitTimeSeconds: 0,
        MaxNumberOfMessages: 10,
      }),
    );
    expect((dead.Messages ?? []).filter((m) => m.Body!.includes(event.id))).toEqual([]);

    healthy = true;
    const again = await api.POST('/v1/events/{id}/redeliver', at(event.id));
    expect(again.response.status).toBe(202);
    const all = await receiver.waitFor((r) => r.length >= 4);
    expect(all[3]!.headers['webhook-id']).toBe(event.id);
    const after = (await api.GET('/v1/events/{id}', at(event.id))).data!.data;
    expect(after.deliveries[0]!.status).toBe('succeeded');
    expect(after.deliveries[0]!.attempts).toHaveLength(4);
    // CONTRACT §3: one redelivery per event per minute; the next is 429 with the wait, and sends nothing.
    const tooSoon = await api.POST('/v1/events/{id}/redeliver', at(event.id));
    expect(tooSoon.response.status).toBe(429);
    expect(tooSoon.error!.error.code).toBe('rate_limited');
    const wait = Number(tooSoon.response.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    const burst = await Promise.all(
      Array.from({ length: 5 }, () => api.POST('/v1/events/{id}/redeliver', at(event.id))),
    );
    expect(burst.map((r) => r.response.status)).toEqual([429, 429, 429, 429, 429]);
    expect(
      (await api.GET('/v1/events/{id}', at(event.id))).data!.data.deliveries[0]!.attempts,
      'no attempt beyond the one redelivery',
    ).toHaveLength(4);
    expect(receiver.received).toHaveLength(4);
    await receiver.close();
  });

  it('redelivers an event once, however many requests race for it', async () => {
    const { api, employeeId } = await organization();
    const receiver = await startReceiver();
    await register(api, receiver.url, { events: ['payroll.completed'] });
    const run = await submit(api, payroll(employeeId));
    await receiver.waitFor((r) => r.length >= 1);
    const event = (
      await api.GET('/v1/events', { params: { query: { payroll_id: run.payroll_id } } })
    ).data!.data.events.find((e) => e.type === 'payroll.completed')!;
    const race = await Promise.all(
      Array.from({ length: 8 }, () => api.POST('/v1/events/{id}/redeliver', at(event.id))),
    );
    expect(race.filter((r) => r.response.status === 202)).toHaveLength(1);
    expect(race.filter((r) => r.response.status === 429)).toHaveLength(7);
    await receiver.waitFor((r) => r.length >= 2);
    await receiver.close();
  });

  it('registers at most 10 endpoints per organization, also when 15 registrations race', async () => {
    const { api } = await organization();
    const race = await Promise.all(
      Array.from({ length: 15 }, (_, i) => api.POST('/v1/webhooks', { body: { url: `http://localhost:9/hook${i}` } })),
    );
    const statuses = race.map((r) => r.response.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 422)).toHaveLength(5);
    const refused = race.find((r) => r.response.status === 422)!;
    expect(refused.error!.error).toMatchObject({
      code: 'webhook_limit_reached',
      details: [expect.objectContaining({ code: 'webhook_limit_reached' })],
    });
    expect((await api.GET('/v1/webhooks', { params: { query: { limit: 100 } } })).data!.data.webhooks).toHaveLength(10);
    // Deleting one frees its place, once.
    const first = race.find((r) => r.response.status === 201)!.data!.data;
    expect((await api.DELETE('/v1/webhooks/{id}', at(first.webhook_id))).response.status).toBe(200);
    expect((await api.POST('/v1/webhooks', { body: { url: 'http://localhost:9/again' } })).response.status).toBe(201);
    expect((await api.POST('/v1/webhooks', { body: { url: 'http://localhost:9/over' } })).response.status).toBe(422);
  });

  it('marks an endpoint unreliable and pauses it after five failed events, until re-enabled', async () => {
    const { api, employeeId } = await organization();
    const receiver = await startReceiver(() => 500);
    const hook = await register(api, receiver.url, { events: ['payroll.submitted'] });
    for (let i = 0; i < 5; i++) await submit(api, payroll(employeeId));
    await receiver.waitFor((r) => r.length >= 15, 30_000);
    await vi.waitFor(
      async () => {
        const status = (await api.GET('/v1/webhooks/{id}', at(hook.webhook_id))).data!.data.status;
        expect(status, `webhook ${hook.webhook_id} marked unreliable within 10000 ms`).toBe('unreliable');
      },
      { timeout: 10_000, interval: 50 },
    );
    await submit(api, payroll(employeeId));
    const paused = await api.GET('/v1/events', { params: { query: { type: 'payroll.submitted', limit: 1 } } });
    expect(paused.data!.data.events[0]!.deliveries).toEqual([]);
    const enabled = await api.PATCH('/v1/webhooks/{id}', { ...at(hook.webhook_id), body: { status: 'active' } });
    expect(enabled.data!.data).toMatchObject({ status: 'active', consecutive_failures: 0 });
    await receiver.close();
  });

  it('signs with both secrets for a day after a rotation', async () => {
    const { api, employeeId } = await organization();
    const receiver = await startReceiver();
    const hook = await register(api, receiver.url, { events: ['payroll.submitted'] });
    const rotated = await api.POST('/v1/webhooks/{id}/rotate-secret', at(hook.webhook_id));
    expect(rotated.response.status).toBe(200);
    expect(rotated.data!.data.secret).not.toBe(hook.secret);
    expect(Date.parse(rotated.data!.data.previous_secret_expires_at!) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    await submit(api, payroll(employeeId));
    const [delivery] = await receiver.waitFor((r) => r.length >= 1);
    expect(String(delivery!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [hook.secret, rotated.data!.data.secret]) {
      expect(new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>)).toMatchObject({
        type: 'payroll.submitted',
      });
    }
    expect(() =>
      new Webhook(`whsec_${Buffer.from('x'.repeat(24)).toString('base64')}`).verify(
        delivery!.body,
        delivery!.headers as Record<string, string>,
      ),
    ).toThrow();
    await receiver.close();
  });

  it('manages endpoints: list without secrets, validation, another organization sees nothing', async () => {
    const { token, api } = await organization();
    const other = await organization();
    const hook = await register(api, 'http://localhost:9/nowhere', { events: ['payroll.completed', 'payroll.failed'] });
    const list = await api.GET('/v1/webhooks');
    expect(list.data!.data.webhooks).toEqual([
      expect.objectContaining({
        webhook_id: hook.webhook_id,
        events: ['payroll.completed', 'payroll.failed'],
        status: 'active',
      }),
    ]);
    expect(asReceived(list.response).text).not.toContain('whsec_');
    const foreignGet = await other.api.GET('/v1/webhooks/{id}', at(hook.webhook_id));
    expect(foreignGet.response.status).toBe(404);
    expect(foreignGet.error!.error).toMatchObject({ code: 'not_found', message: 'Not found' });
    const foreignDelete = await other.api.DELETE('/v1/webhooks/{id}', at(hook.webhook_id));
    expect(foreignDelete.response.status).toBe(404);
    expect(foreignDelete.error!.error).toMatchObject({ code: 'not_found', message: 'Not found' });
    // An event type the document does not list: hostile input the typed client cannot express.
    const bad = await stack.request('POST', '/v1/webhooks', {
      token,
      body: { url: 'http://10.0.0.1/hook', events: ['payroll.exploded'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['events[0]']);
    const unsafe = await api.POST('/v1/webhooks', { body: { url: 'http://10.0.0.1/hook' } });
    expect(unsafe.response.status).toBe(400);
    expect(unsafe.error!.error.details[0]).toMatchObject({ field: 'url', code: 'unsafe_url' });
    expect((await api.DELETE('/v1/webhooks/{id}', at(hook.webhook_id))).response.status).toBe(200);
    const removed = await api.GET('/v1/webhooks/{id}', at(hook.webhook_id));
    expect(removed.response.status).toBe(404);
    expect(removed.error!.error.code).toBe('not_found');
    const unknownEvent = await api.POST('/v1/events/{id}/redeliver', at('evt_unknown'));
    expect(unknownEvent.response.status).toBe(404);
    expect(unknownEvent.error!.error.code).toBe('not_found');
  });
});

describe('webhook URLs in production', () => {
  it.each([
    'http://hooks.example.com/x',
    'https://127.0.0.1/hook',
    'http://127.0.0.1/hook',
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://localhost/hook',
  ])('refuses %s', async (url) => {
    const res = await typedClient(prod, prodToken).POST('/v1/webhooks', { body: { url } });
    expect(res.response.status).toBe(400);
    expect(res.error!.error.details[0]).toMatchObject({ field: 'url', code: 'unsafe_url' });
  });
});

let prod: RunningStack;
let prodToken: string;
beforeAll(async () => {
  prod = await startLocalStack({ env: { PAYROLL_ENVIRONMENT: 'production' } });
  prodToken = (await prod.createOrganization('Prod Hooks')).token;
});
afterAll(async () => {
  await prod?.stop();
});
