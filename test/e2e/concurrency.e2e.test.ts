import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payrollBody } from '../support/payroll-fixture.js';
import { startLocalStack, type HttpResponse, type RunningStack } from '../support/local-stack.js';
import { asReceived, typedClient, type TypedClient } from '../support/typed-client.js';

/**
 * Races over HTTPS, 100 requests at once, each on its own TLS connection, through the local server, the handlers
 * and DynamoDB Local: the guarantees the engine-level tests prove must also hold end to end. Every answer is
 * checked against the OpenAPI document, and an answer that is neither of the expected ones (a 5xx, a 429, a
 * socket error) fails the test with the tally. Requests go through the client typed from the document; the races
 * read each answer as it arrived (`asReceived`), to tally statuses and compare bodies byte for byte.
 */
const N = 100;

let stack: RunningStack;
let api: TypedClient;
let employeeIds: string[];

beforeAll(async () => {
  stack = await startLocalStack();
  api = typedClient(stack, (await stack.createOrganization('Concurrency Co')).token);
  employeeIds = [];
  for (let i = 0; i < 3; i++) {
    const res = await api.POST('/v1/employees', {
      body: {
        first_name: 'Connie',
        last_name: `Current ${i}`,
        email: `connie${i}@example.com`,
        employment_type: 'full_time',
        pay_group: 'default',
        pay_schedule: 'biweekly',
        start_date: '2026-01-05',
        bank_account: { account_number: String(40_000_000 + i), routing_number: '021000021', account_type: 'checking' },
      },
    });
    expect(res.response.status).toBe(201);
    employeeIds.push(res.data!.data.employee_id);
  }
});

afterAll(async () => {
  await stack?.stop();
});

/** Sends `n` requests at once; answers in order, a socket error as its message. */
async function race(n: number, send: (i: number) => Promise<HttpResponse>) {
  const started = performance.now();
  const settled = await Promise.allSettled(Array.from({ length: n }, (_, i) => send(i)));
  const ms = Math.round(performance.now() - started);
  const answers = settled.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  const tally: Record<string, number> = {};
  for (const s of settled) {
    const key =
      s.status === 'fulfilled'
        ? `${s.value.status}${s.value.body?.error ? ` ${s.value.body.error.code}` : ''}`
        : `error ${String(s.reason?.code ?? s.reason)}`;
    tally[key] = (tally[key] ?? 0) + 1;
  }
  return { answers, tally, ms };
}

async function payrollsOfWindow(start: string) {
  const res = await api.GET('/v1/payroll', { params: { query: { limit: 100 } } });
  expect(res.response.status).toBe(200);
  return res.data!.data.payrolls.filter((p) => p.pay_period_start === start && p.status !== 'cancelled');
}

describe(`${N} concurrent requests over HTTPS`, () => {
  it(`accepts exactly one of ${N} identical regular submissions and names it to the other ${N - 1}`, async () => {
    const body = payrollBody(employeeIds, {
      pay_period_start: '2026-09-01',
      pay_period_end: '2026-09-14',
      pay_date: '2026-09-18',
    });
    const { answers, tally, ms } = await race(N, async () =>
      asReceived((await api.POST('/v1/payroll', { body })).response),
    );
    console.info(`${N} concurrent identical submissions: ${JSON.stringify(tally)} in ${ms} ms`);
    expect(tally).toEqual({ '202': 1, '409 duplicate_payroll_window': N - 1 });
    const accepted = answers.find((a) => a!.status === 202)!;
    const payrollId = accepted.body.data.payroll_id;
    expect(accepted.headers.location).toBe(`/v1/payroll/${payrollId}`);
    for (const refused of answers.filter((a) => a!.status === 409)) {
      expect(refused!.body.error).toMatchObject({
        code: 'duplicate_payroll_window',
        message: 'Duplicate payroll window',
      });
      expect(refused!.body.error.details[0].payroll_id).toBe(payrollId);
      expect(refused!.headers['x-request-id']).toBe(refused!.body.request_id);
    }
    expect(new Set(answers.map((a) => a!.body.request_id)).size).toBe(N);
    expect((await payrollsOfWindow('2026-09-01')).map((p) => p.payroll_id)).toEqual([payrollId]);
  });

  it(`answers ${N} submissions with one Idempotency-Key with one payroll and ${N} identical answers`, async () => {
    const body = payrollBody(employeeIds, {
      pay_period_start: '2026-10-01',
      pay_period_end: '2026-10-14',
      pay_date: '2026-10-16',
    });
    const params = { header: { 'Idempotency-Key': `concurrent-${Date.now()}` } };
    const { answers, tally, ms } = await race(N, async () =>
      asReceived((await api.POST('/v1/payroll', { params, body })).response),
    );
    console.info(`${N} concurrent submissions with one Idempotency-Key: ${JSON.stringify(tally)} in ${ms} ms`);
    expect(tally).toEqual({ '202': N });
    expect(answers.filter((a) => a!.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(answers.filter((a) => a!.headers['idempotent-replayed'] === 'true')).toHaveLength(N - 1);
    expect(new Set(answers.map((a) => JSON.stringify(a!.body.data))).size).toBe(1);
    const payrollId = answers[0]!.body.data.payroll_id;
    expect((await payrollsOfWindow('2026-10-01')).map((p) => p.payroll_id)).toEqual([payrollId]);
    const reused = await api.POST('/v1/payroll', { params, body: { ...body, pay_date: '2026-10-15' } });
    expect(reused.response.status).toBe(422);
    expect(reused.error!.error.code).toBe('idempotency_key_reused');
  });

  it(`lets exactly one of ${N} creates with one email, in ${N} spellings of its case, through`, async () => {
    const org = await stack.createOrganization('Email Race Co');
    // Each request spells the address differently: the uniqueness is of the address, not of its spelling.
    const spell = (i: number) =>
      [...'race.condition@example.com'].map((c, k) => ((i >> (k % 7)) & 1 ? c.toUpperCase() : c)).join('');
    expect(new Set(Array.from({ length: N }, (_, i) => spell(i))).size).toBe(N);
    const theirs = typedClient(stack, org.token);
    const { answers, tally, ms } = await race(N, async (i) =>
      asReceived(
        (
          await theirs.POST('/v1/employees', {
            body: {
              first_name: 'Rae',
              last_name: `Racer ${i}`,
              email: spell(i),
              employment_type: 'full_time',
              pay_group: 'default',
              pay_schedule: 'biweekly',
              start_date: '2026-01-05',
              bank_account: {
                account_number: String(50_000_000 + i),
                routing_number: '021000021',
                account_type: 'checking',
              },
            },
          })
        ).response,
      ),
    );
    console.info(`${N} concurrent creates with one email: ${JSON.stringify(tally)} in ${ms} ms`);
    expect(tally).toEqual({ '201': 1, '409 employee_already_exists': N - 1 });
    const winner = answers.find((a) => a!.status === 201)!.body.data;
    const list = await theirs.GET('/v1/employees', { params: { query: { limit: 100 } } });
    expect(list.data!.data.employees.map((e) => e.employee_id)).toEqual([winner.employee_id]);
  });
});
