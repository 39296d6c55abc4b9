import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { assertBankRules, readNacha } from '../support/nacha-check.js';
import { typedClient, type components, type operations, type TypedClient } from '../support/typed-client.js';

/**
 * Payroll runs over HTTPS, through the client typed from the OpenAPI document. `stack.request` remains only for
 * requests outside the document the typed client cannot express: a body sent to PUT or PATCH of a run (those
 * operations take none) and a status filter that is not one of the document's.
 */
let stack: RunningStack;
let token: string;
let api: TypedClient;
let seq = 0;

type Submission = components['schemas']['PayrollSubmission'];
type BankAccount = operations['createEmployee']['requestBody']['content']['application/json']['bank_account'];

async function employee(
  bank: BankAccount = {
    account_number: String(70_000_000 + seq),
    routing_number: '021000021',
    account_type: 'checking',
  },
  t = token,
) {
  const n = seq++;
  const res = await typedClient(stack, t).POST('/v1/employees', {
    body: {
      first_name: 'Pat',
      last_name: `Payee ${n}`,
      email: `pat${n}@example.com`,
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2026-01-05',
      bank_account: bank,
    },
  });
  expect(res.response.status).toBe(201);
  return res.data!.data.employee_id;
}

/** Each test pays its own pay period, so windows never collide between tests. */
let period = 0;
function run(ids: string[], extra: Partial<Submission> = {}): Submission {
  const start = new Date(Date.UTC(2026, 1, 1 + 14 * period++));
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return {
    pay_period_start: iso(start),
    pay_period_end: iso(new Date(start.getTime() + 13 * 86_400_000)),
    pay_date: iso(new Date(start.getTime() + 18 * 86_400_000)),
    employees: ids.map((id, i) => ({
      employee_id: id,
      gross_pay: 1500 + i,
      hours_worked: 80,
      deductions: { taxes: 300.1, retirement: '45.00' },
    })),
    ...extra,
  };
}

/** The path parameter of `/v1/payroll/{id}…`. */
const at = (id: string) => ({ params: { path: { id } } });

/** The run a submission answered with: its 202 (a dry run's 200 carries no payroll_id). */
function accepted(res: {
  data?: { data: components['schemas']['SubmittedPayroll'] | components['schemas']['PayrollDryRun'] };
}) {
  const data = res.data?.data;
  if (!data || !('payroll_id' in data)) throw new Error(`not an accepted submission: ${JSON.stringify(res.data)}`);
  return data;
}

/** Polls until the run reaches a terminal status (bounded), so a wrong outcome fails at once instead of timing out. */
function settled(payrollId: string) {
  return vi.waitFor(
    async () => {
      const run = (await api.GET('/v1/payroll/{id}', at(payrollId))).data!.data;
      if (!['completed', 'rejected', 'failed', 'cancelled'].includes(run.status))
        throw new Error(`payroll ${payrollId} not settled within 20000 ms: still ${run.status}`);
      return run;
    },
    { timeout: 20_000, interval: 50 },
  );
}

beforeAll(async () => {
  stack = await startLocalStack();
  ({ token } = await stack.createOrganization('Payroll E2E'));
  api = typedClient(stack, token);
});

afterAll(async () => {
  await stack?.stop();
});

describe('payroll over HTTPS', () => {
  it('accepts a run with 202 and completes it on its own, with a NACHA file that agrees', async () => {
    const ids = [await employee(), await employee(), await employee()];
    const res = await api.POST('/v1/payroll', { body: run(ids) });
    expect(res.response.status).toBe(202);
    const p = accepted(res);
    expect(res.response.headers.get('location')).toBe(`/v1/payroll/${p.payroll_id}`);
    expect(p).toMatchObject({
      status: 'pending',
      type: 'regular',
      employee_ids: ids,
      employee_count: 3,
      totals: { gross_pay: 4503, bonuses: 0, deductions: 1035.3, net_pay: 3467.7 },
    });
    expect(p.content_hash).toMatch(/^[0-9a-f]{64}$/);

    const done = await settled(p.payroll_id);
    expect(done.status).toBe('completed');
    // After polling, the ids answer from the container's memory: the same, in submission order.
    expect(done.employee_ids).toEqual(ids);
    expect(done.progress).toEqual({ total: 3, done: 3 });
    expect(done.status_history.map((h) => h.status)).toEqual(['pending', 'processing', 'completed']);
    expect(done.disbursement).toMatchObject({ entry_count: 3, total_credit: 3467.7, total_debit: 0, batch_count: 1 });

    const file = await api.GET('/v1/payroll/{id}/disbursement', { ...at(p.payroll_id), parseAs: 'text' });
    expect(file.response.status).toBe(200);
    expect(file.response.headers.get('content-type')).toMatch(/^text\/plain/);
    const lines = file.data!.split('\n');
    expect(lines.every((l) => l.length === 94)).toBe(true);
    expect(lines.length % 10).toBe(0);
    expect(lines.filter((l) => l.startsWith('6'))).toHaveLength(3);
    assertBankRules(readNacha(file.data!), { payDate: p.pay_date, balanced: false });
    const control = await api.GET('/v1/payroll/{id}/disbursement', {
      params: { path: { id: p.payroll_id }, header: { Accept: 'application/json' } },
    });
    expect(control.data!.data).toMatchObject({
      entry_count: 3,
      total_credit: 3467.7,
      entry_hash: done.disbursement!.entry_hash,
    });
  });

  it('validates a dry run exactly as a submission, storing nothing', async () => {
    const ids = [await employee()];
    const body = run(ids);
    const dry = await api.POST('/v1/payroll', { params: { query: { dry_run: 'true' } }, body });
    expect(dry.response.status).toBe(200);
    expect(dry.data!.data).toMatchObject({ employee_ids: ids, totals: { net_pay: 1154.9 } });
    expect(dry.data!.data).not.toHaveProperty('payroll_id');
    const badDry = await api.POST('/v1/payroll', {
      params: { query: { dry_run: 'true' } },
      body: { ...body, pay_date: 'soon' },
    });
    expect(badDry.response.status).toBe(400);
    expect(badDry.error!.error.code).toBe('invalid_date_range');
    const real = await api.POST('/v1/payroll', { body });
    expect(real.response.status).toBe(202);
  });

  it('reports every problem at once with the most basic status first', async () => {
    const noBank = await employee(null);
    const foreign = await stack.createOrganization('Other');
    const theirs = await employee(undefined, foreign.token);
    const ok = await employee();
    const taken = run([ok]);
    expect((await api.POST('/v1/payroll', { body: taken })).response.status).toBe(202);

    const all = await api.POST('/v1/payroll', {
      body: {
        ...taken,
        employees: [
          { employee_id: noBank, gross_pay: 100, hours_worked: 10 },
          { employee_id: theirs, gross_pay: 100, hours_worked: 10 },
          { employee_id: ok, gross_pay: 100, hours_worked: '' },
        ],
      },
    });
    expect(all.response.status).toBe(400);
    expect(all.error!.error).toMatchObject({ code: 'invalid_request_body', message: 'Invalid request body' });
    expect(all.error!.error.details.map((d) => [d.field, d.code])).toEqual(
      expect.arrayContaining([
        ['employees[2].hours_worked', 'invalid_request_body'],
        ['employees[0].employee_id', 'missing_bank_account'],
        ['employees[1].employee_id', 'employee_not_found'],
        ['pay_period_start', 'duplicate_payroll_window'],
      ]),
    );

    const unprocessable = await api.POST('/v1/payroll', {
      body: { ...taken, employees: [{ employee_id: noBank, gross_pay: 100, hours_worked: 10 }] },
    });
    expect(unprocessable.response.status).toBe(422);
    expect(unprocessable.error!.error).toMatchObject({
      code: 'missing_bank_account',
      message: 'Missing bank account info',
    });

    const window = await api.POST('/v1/payroll', { body: taken });
    expect(window.response.status).toBe(409);
    expect(window.error!.error).toMatchObject({
      code: 'duplicate_payroll_window',
      message: 'Duplicate payroll window',
    });
    expect(window.error!.error.details[0]!.payroll_id).toMatch(/^pay_/);

    const negative = await api.POST('/v1/payroll', {
      body: run([ok], { employees: [{ employee_id: ok, gross_pay: 100, hours_worked: 1, deductions: 100.01 }] }),
    });
    expect(negative.response.status).toBe(400);
    expect(negative.error!.error).toMatchObject({ code: 'negative_pay', message: 'Negative pay' });

    const offCycle = await api.POST('/v1/payroll', { body: { ...taken, type: 'off_cycle' } });
    expect(offCycle.response.status).toBe(202);
    expect(offCycle.data!.data.type).toBe('off_cycle');
  });

  it('replays an idempotent submission and refuses the key with another body', async () => {
    const ids = [await employee()];
    const body = run(ids);
    const params = { header: { 'Idempotency-Key': `key-${Date.now()}` } };
    const first = await api.POST('/v1/payroll', { params, body });
    // The same body laid out otherwise: the key compares content, not bytes.
    const again = await api.POST('/v1/payroll', { params, body, bodySerializer: (b) => JSON.stringify(b, null, 2) });
    expect(first.response.status).toBe(202);
    expect(again.response.status).toBe(202);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(first.response.headers.get('idempotent-replayed')).toBeNull();
    expect(again.data!.data).toEqual(first.data!.data);
    const other = await api.POST('/v1/payroll', { params, body: { ...body, pay_date: body.pay_period_end } });
    expect(other.response.status).toBe(422);
    expect(other.error!.error.code).toBe('idempotency_key_reused');
  });

  it('refuses every change to a submitted payroll, and cancels in the sandbox, freeing the window', async () => {
    const body = run([await employee()]);
    const p = accepted(await api.POST('/v1/payroll', { body }));
    // PUT and PATCH with a body the document does not describe (those operations take none), so sent raw.
    for (const method of ['PATCH', 'PUT']) {
      const res = await stack.request(method, `/v1/payroll/${p.payroll_id}`, {
        token,
        body: { pay_date: '2030-01-01' },
      });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'payroll_immutable', message: 'Payroll is immutable' });
    }
    const deleted = await api.DELETE('/v1/payroll/{id}', at(p.payroll_id));
    expect(deleted.response.status).toBe(409);
    expect(deleted.error!.error).toMatchObject({ code: 'payroll_immutable', message: 'Payroll is immutable' });
    await settled(p.payroll_id);
    const cancelled = await api.POST('/v1/payroll/{id}/cancel', at(p.payroll_id));
    expect(cancelled.response.status).toBe(200);
    expect(cancelled.data!.data.status).toBe('cancelled');
    expect((await api.POST('/v1/payroll', { body })).response.status).toBe(202);
    expect((await api.POST('/v1/payroll/{id}/cancel', at('pay_unknown'))).response.status).toBe(404);
  });

  it('simulates a rejected run, and a returned deposit in a run that completes, in the sandbox', async () => {
    const ids = [await employee()];
    const rejected = accepted(
      await api.POST('/v1/payroll', {
        body: run(ids, {
          employees: [{ employee_id: ids[0]!, gross_pay: 10, hours_worked: 1, notes: 'simulate:reject' }],
        }),
      }),
    );
    const r = await settled(rejected.payroll_id);
    expect(r.status).toBe('rejected');
    expect(r.findings[0]).toMatchObject({ code: 'simulated_rejection', employee_id: ids[0] });

    const bounce = await employee({
      account_number: '000000000',
      routing_number: '021000021',
      account_type: 'checking',
    });
    const returned = accepted(await api.POST('/v1/payroll', { body: run([bounce]) }));
    const f = await settled(returned.payroll_id);
    expect(f.status).toBe('completed');
    const { returns } = await vi.waitFor(
      async () => {
        const now = (await api.GET('/v1/payroll/{id}', at(returned.payroll_id))).data!.data;
        if (now.returns.count === 0) throw new Error('the deposit has not come back yet');
        return now;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(returns.count).toBe(1);
  });

  it('fails a run on request (simulate:fail): paystubs voided, file withdrawn (410); a rejected run answers 409', async () => {
    const ids = [await employee(), await employee()];
    const failing = accepted(
      await api.POST('/v1/payroll', {
        body: run(ids, {
          employees: [
            { employee_id: ids[0]!, gross_pay: 10, hours_worked: 1, notes: 'simulate:fail' },
            { employee_id: ids[1]!, gross_pay: 20, hours_worked: 1 },
          ],
        }),
      }),
    );
    const f = await settled(failing.payroll_id);
    expect(f.status).toBe('failed');
    expect(f.failure_reason).toContain('simulate:fail');
    const stubs = await api.GET('/v1/paystubs', { params: { query: { payroll_id: failing.payroll_id } } });
    expect(stubs.data!.data.paystubs.map((p) => [p.status, p.payment.status])).toEqual([
      ['voided', 'cancelled'],
      ['voided', 'cancelled'],
    ]);
    const withdrawn = await api.GET('/v1/payroll/{id}/disbursement', { ...at(failing.payroll_id), parseAs: 'text' });
    expect(withdrawn.response.status).toBe(410);
    expect(withdrawn.error).toMatchObject({ error: { code: 'disbursement_withdrawn' } });

    // A cancelled run's file is withdrawn too.
    const done = accepted(await api.POST('/v1/payroll', { body: run([ids[1]!]) }));
    expect((await settled(done.payroll_id)).status).toBe('completed');
    expect(
      (await api.GET('/v1/payroll/{id}/disbursement', { ...at(done.payroll_id), parseAs: 'text' })).response.status,
    ).toBe(200);
    expect((await api.POST('/v1/payroll/{id}/cancel', at(done.payroll_id))).response.status).toBe(200);
    const gone = await api.GET('/v1/payroll/{id}/disbursement', {
      params: { path: { id: done.payroll_id }, header: { Accept: 'application/json' } },
    });
    expect(gone.response.status).toBe(410);

    // A rejected run exists and will never have a file: told apart from an unknown id.
    const rejected = accepted(
      await api.POST('/v1/payroll', {
        body: run([ids[0]!], {
          employees: [{ employee_id: ids[0]!, gross_pay: 10, hours_worked: 1, notes: 'simulate:reject' }],
        }),
      }),
    );
    expect((await settled(rejected.payroll_id)).status).toBe('rejected');
    const never = await api.GET('/v1/payroll/{id}/disbursement', { ...at(rejected.payroll_id), parseAs: 'text' });
    expect(never.response.status).toBe(409);
    expect(never.error).toMatchObject({ error: { code: 'payroll_rejected' } });
    const unknown = await api.GET('/v1/payroll/{id}/disbursement', {
      ...at('pay_00000000000000000000000000'),
      parseAs: 'text',
    });
    expect(unknown.response.status).toBe(404);
  });

  it('lists the history with filters and pages', async () => {
    const all = await api.GET('/v1/payroll', { params: { query: { limit: 100 } } });
    expect(all.response.status).toBe(200);
    expect(all.data!.data.payrolls.length).toBeGreaterThan(3);
    const completed = await api.GET('/v1/payroll', { params: { query: { status: 'completed', limit: 100 } } });
    expect(completed.data!.data.payrolls.every((p) => p.status === 'completed')).toBe(true);
    const page = await api.GET('/v1/payroll', { params: { query: { limit: 2 } } });
    expect(page.data!.data.payrolls).toHaveLength(2);
    const pageToken = page.data!.data.next_page_token!;
    const next = await api.GET('/v1/payroll', { params: { query: { limit: 2, page_token: pageToken } } });
    expect(next.data!.data.payrolls[0]!.payroll_id).not.toBe(page.data!.data.payrolls[0]!.payroll_id);
    const replayedWithFilter = await api.GET('/v1/payroll', {
      params: { query: { limit: 2, status: 'failed', page_token: pageToken } },
    });
    expect(replayedWithFilter.response.status).toBe(400);
    // A status the document does not list: hostile input the typed client cannot express.
    expect((await stack.request('GET', '/v1/payroll?status=done', { token })).status).toBe(400);
  });

  it('refuses more than 25,000 employees with 413', async () => {
    const res = await api.POST('/v1/payroll', {
      body: run([], {
        employees: Array.from({ length: 25_001 }, (_, i) => ({ employee_id: `e${i}`, gross_pay: 1, hours_worked: 1 })),
      }),
    });
    expect(res.response.status).toBe(413);
    expect(res.error!.error.code).toBe('payload_too_large');
    expect(res.error!.error.details[0]!.message).toContain('25000');
  });
});

describe('payroll in production', () => {
  it('refuses cancellation outside the sandbox', async () => {
    const prod = await startLocalStack({ env: { PAYROLL_ENVIRONMENT: 'production' } });
    try {
      const org = await prod.createOrganization('Prod Co');
      expect(org.token).toMatch(/^pk_live_/);
      const res = await typedClient(prod, org.token).POST('/v1/payroll/{id}/cancel', at('pay_x'));
      expect(res.response.status).toBe(403);
      expect(res.error!.error).toMatchObject({
        code: 'sandbox_only',
        message: 'Cancellation is only available in the sandbox',
      });
    } finally {
      await prod.stop();
    }
  });
});

describe('payroll across a restart of the local stack', () => {
  it('completes a run that was still pending when the stack stopped', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'payroll-resume-'));
    try {
      // No queue worker: the run is accepted and stays pending, its message held only by the in-memory queue.
      const first = await startLocalStack({ dir, env: { PAYROLL_LOCAL_WORKERS: 'external' } });
      const org = await first.createOrganization('Resume Co');
      const firstApi = typedClient(first, org.token);
      const emp = await firstApi.POST('/v1/employees', {
        body: {
          first_name: 'Rita',
          last_name: 'Restart',
          email: 'rita@example.com',
          employment_type: 'full_time',
          pay_group: 'default',
          pay_schedule: 'biweekly',
          start_date: '2026-01-05',
          bank_account: { account_number: '31415926', routing_number: '021000021', account_type: 'checking' },
        },
      });
      const submitted = await firstApi.POST('/v1/payroll', {
        body: {
          pay_period_start: '2026-03-01',
          pay_period_end: '2026-03-14',
          pay_date: '2026-03-20',
          employees: [{ employee_id: emp.data!.data.employee_id, gross_pay: 1000, hours_worked: 40 }],
        },
      });
      expect(submitted.response.status).toBe(202);
      await first.stop();

      const second = await startLocalStack({ dir });
      try {
        const secondApi = typedClient(second, org.token);
        expect(second.output()).toContain('Resumed 1 unfinished payroll run(s)');
        const id = accepted(submitted).payroll_id;
        const status = await vi.waitFor(
          async () => {
            const current = (await secondApi.GET('/v1/payroll/{id}', at(id))).data!.data.status;
            if (!['completed', 'failed', 'rejected'].includes(current))
              throw new Error(`payroll ${id} not finished within 20000 ms after the restart: still ${current}`);
            return current;
          },
          { timeout: 20_000, interval: 50 },
        );
        expect(status).toBe('completed');
        expect(
          (await secondApi.GET('/v1/payroll/{id}/disbursement', { ...at(id), parseAs: 'text' })).response.status,
        ).toBe(200);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
