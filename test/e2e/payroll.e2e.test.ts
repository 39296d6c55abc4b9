import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';

let stack: RunningStack;
let token: string;
let seq = 0;

async function employee(bank: Record<string, string> | null = { account_number: String(70_000_000 + seq), routing_number: '021000021', account_type: 'checking' }, t = token) {
  const n = seq++;
  const res = await stack.request('POST', '/v1/employees', { token: t, body: {
    first_name: 'Pat', last_name: `Payee ${n}`, email: `pat${n}@example.com`, employment_type: 'full_time', pay_group: 'default',
    pay_schedule: 'biweekly', start_date: '2026-01-05', bank_account: bank,
  } });
  expect(res.status).toBe(201);
  return res.body.data.employee_id as string;
}

/** Each test pays its own pay period, so windows never collide between tests. */
let period = 0;
function run(ids: string[], extra: Record<string, unknown> = {}) {
  const start = new Date(Date.UTC(2026, 1, 1 + 14 * period++));
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return {
    pay_period_start: iso(start), pay_period_end: iso(new Date(start.getTime() + 13 * 86_400_000)), pay_date: iso(new Date(start.getTime() + 18 * 86_400_000)),
    employees: ids.map((id, i) => ({ employee_id: id, gross_pay: 1500 + i, hours_worked: 80, deductions: { taxes: 300.1, retirement: '45.00' } })),
    ...extra,
  };
}

/** Polls until the run reaches a terminal status (bounded), so a wrong outcome fails at once instead of timing out. */
async function settled(payrollId: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await stack.request('GET', `/v1/payroll/${payrollId}`, { token });
    if (['completed', 'rejected', 'failed', 'cancelled'].includes(res.body.data.status) || Date.now() > deadline) return res.body.data;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  stack = await startLocalStack();
  ({ token } = await stack.createOrganization('Payroll E2E'));
});

afterAll(async () => {
  await stack?.stop();
});

describe('payroll over HTTPS', () => {
  it('accepts a run with 202 and completes it on its own, with a NACHA file that agrees', async () => {
    const ids = [await employee(), await employee(), await employee()];
    const res = await stack.request('POST', '/v1/payroll', { token, body: run(ids) });
    expect(res.status).toBe(202);
    const p = res.body.data;
    expect(res.headers.location).toBe(`/v1/payroll/${p.payroll_id}`);
    expect(p).toMatchObject({ status: 'pending', type: 'regular', employee_ids: ids, employee_count: 3, totals: { gross_pay: 4503, bonuses: 0, deductions: 1035.3, net_pay: 3467.7 } });
    expect(p.content_hash).toMatch(/^[0-9a-f]{64}$/);

    const done = await settled(p.payroll_id);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual({ total: 3, done: 3 });
    expect(done.status_history.map((h: { status: string }) => h.status)).toEqual(['pending', 'processing', 'completed']);
    expect(done.disbursement).toMatchObject({ entry_count: 3, total_credit: 3467.7, total_debit: 0, batch_count: 1 });

    const file = await stack.request('GET', `/v1/payroll/${p.payroll_id}/disbursement`, { token });
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toMatch(/^text\/plain/);
    const lines = file.text.split('\n');
    expect(lines.every((l) => l.length === 94)).toBe(true);
    expect(lines.length % 10).toBe(0);
    expect(lines.filter((l) => l.startsWith('6'))).toHaveLength(3);
    const control = await stack.request('GET', `/v1/payroll/${p.payroll_id}/disbursement`, { token, headers: { Accept: 'application/json' } });
    expect(control.body.data).toMatchObject({ entry_count: 3, total_credit: 3467.7, entry_hash: done.disbursement.entry_hash });
  });

  it('validates a dry run exactly as a submission, storing nothing', async () => {
    const ids = [await employee()];
    const body = run(ids);
    const dry = await stack.request('POST', '/v1/payroll?dry_run=true', { token, body });
    expect(dry.status).toBe(200);
    expect(dry.body.data).toMatchObject({ employee_ids: ids, totals: { net_pay: 1154.9 } });
    expect(dry.body.data.payroll_id).toBeUndefined();
    const badDry = await stack.request('POST', '/v1/payroll?dry_run=true', { token, body: { ...body, pay_date: 'soon' } });
    expect(badDry.status).toBe(400);
    expect(badDry.body.error.code).toBe('invalid_date_range');
    const real = await stack.request('POST', '/v1/payroll', { token, body });
    expect(real.status).toBe(202);
  });

  it('reports every problem at once with the most basic status first', async () => {
    const noBank = await employee(null);
    const foreign = await stack.createOrganization('Other');
    const theirs = await employee(undefined, foreign.token);
    const ok = await employee();
    const taken = run([ok]);
    expect((await stack.request('POST', '/v1/payroll', { token, body: taken })).status).toBe(202);

    const all = await stack.request('POST', '/v1/payroll', { token, body: { ...taken, employees: [
      { employee_id: noBank, gross_pay: 100, hours_worked: 10 },
      { employee_id: theirs, gross_pay: 100, hours_worked: 10 },
      { employee_id: ok, gross_pay: 100, hours_worked: '' },
    ] } });
    expect(all.status).toBe(400);
    expect(all.body.error).toMatchObject({ code: 'invalid_request_body', message: 'Invalid request body' });
    expect(all.body.error.details.map((d: { field: string; code: string }) => [d.field, d.code])).toEqual(expect.arrayContaining([
      ['employees[2].hours_worked', 'invalid_request_body'],
      ['employees[0].employee_id', 'missing_bank_account'],
      ['employees[1].employee_id', 'employee_not_found'],
      ['pay_period_start', 'duplicate_payroll_window'],
    ]));

    const unprocessable = await stack.request('POST', '/v1/payroll', { token, body: { ...taken, employees: [{ employee_id: noBank, gross_pay: 100, hours_worked: 10 }] } });
    expect(unprocessable.status).toBe(422);
    expect(unprocessable.body.error).toMatchObject({ code: 'missing_bank_account', message: 'Missing bank account info' });

    const window = await stack.request('POST', '/v1/payroll', { token, body: taken });
    expect(window.status).toBe(409);
    expect(window.body.error).toMatchObject({ code: 'duplicate_payroll_window', message: 'Duplicate payroll window' });
    expect(window.body.error.details[0].payroll_id).toMatch(/^pay_/);

    const negative = await stack.request('POST', '/v1/payroll', { token, body: run([ok], { employees: [{ employee_id: ok, gross_pay: 100, hours_worked: 1, deductions: 100.01 }] }) });
    expect(negative.status).toBe(400);
    expect(negative.body.error).toMatchObject({ code: 'negative_pay', message: 'Negative pay' });

    const offCycle = await stack.request('POST', '/v1/payroll', { token, body: { ...taken, type: 'off_cycle' } });
    expect(offCycle.status).toBe(202);
    expect(offCycle.body.data.type).toBe('off_cycle');
  });

  it('replays an idempotent submission and refuses the key with another body', async () => {
    const ids = [await employee()];
    const body = run(ids);
    const headers = { 'Idempotency-Key': `key-${Date.now()}` };
    const first = await stack.request('POST', '/v1/payroll', { token, body, headers });
    const again = await stack.request('POST', '/v1/payroll', { token, body: JSON.stringify(body, null, 2), headers });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.data).toEqual(first.body.data);
    const other = await stack.request('POST', '/v1/payroll', { token, body: { ...body, pay_date: body.pay_period_end }, headers });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });

  it('accepts exactly one of 50 concurrent identical submissions', async () => {
    const body = run([await employee()]);
    const results = await Promise.all(Array.from({ length: 50 }, () => stack.request('POST', '/v1/payroll', { token, body })));
    expect(results.filter((r) => r.status === 202)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(49);
  });

  it('refuses every change to a submitted payroll, and cancels in the sandbox, freeing the window', async () => {
    const body = run([await employee()]);
    const p = (await stack.request('POST', '/v1/payroll', { token, body })).body.data;
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      const res = await stack.request(method, `/v1/payroll/${p.payroll_id}`, { token, body: method === 'DELETE' ? undefined : { pay_date: '2030-01-01' } });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'payroll_immutable', message: 'Payroll is immutable' });
    }
    await settled(p.payroll_id);
    const cancelled = await stack.request('POST', `/v1/payroll/${p.payroll_id}/cancel`, { token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.status).toBe('cancelled');
    expect((await stack.request('POST', '/v1/payroll', { token, body })).status).toBe(202);
    expect((await stack.request('POST', `/v1/payroll/pay_unknown/cancel`, { token })).status).toBe(404);
  });

  it('simulates a rejected and a failed run in the sandbox', async () => {
    const ids = [await employee()];
    const rejected = (await stack.request('POST', '/v1/payroll', { token, body: run(ids, { employees: [{ employee_id: ids[0], gross_pay: 10, hours_worked: 1, notes: 'simulate:reject' }] }) })).body.data;
    const r = await settled(rejected.payroll_id);
    expect(r.status).toBe('rejected');
    expect(r.findings[0]).toMatchObject({ code: 'simulated_rejection', employee_id: ids[0] });

    const bounce = await employee({ account_number: '000000000', routing_number: '021000021', account_type: 'checking' });
    const failed = (await stack.request('POST', '/v1/payroll', { token, body: run([bounce]) })).body.data;
    const f = await settled(failed.payroll_id);
    expect(f.status).toBe('failed');
    expect(f.failure_reason).toContain('R03');
  });

  it('lists the history with filters and pages', async () => {
    const all = await stack.request('GET', '/v1/payroll?limit=100', { token });
    expect(all.status).toBe(200);
    expect(all.body.data.payrolls.length).toBeGreaterThan(3);
    const completed = await stack.request('GET', '/v1/payroll?status=completed&limit=100', { token });
    expect(completed.body.data.payrolls.every((p: { status: string }) => p.status === 'completed')).toBe(true);
    const page = await stack.request('GET', '/v1/payroll?limit=2', { token });
    expect(page.body.data.payrolls).toHaveLength(2);
    const next = await stack.request('GET', `/v1/payroll?limit=2&page_token=${encodeURIComponent(page.body.data.next_page_token)}`, { token });
    expect(next.body.data.payrolls[0].payroll_id).not.toBe(page.body.data.payrolls[0].payroll_id);
    const replayedWithFilter = await stack.request('GET', `/v1/payroll?limit=2&status=failed&page_token=${encodeURIComponent(page.body.data.next_page_token)}`, { token });
    expect(replayedWithFilter.status).toBe(400);
    expect((await stack.request('GET', '/v1/payroll?status=done', { token })).status).toBe(400);
  });

  it('refuses more than 25,000 employees with 413', async () => {
    const res = await stack.request('POST', '/v1/payroll', { token, body: run([], { employees: Array.from({ length: 25_001 }, (_, i) => ({ employee_id: `e${i}`, gross_pay: 1, hours_worked: 1 })) }) });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect(res.body.error.details[0].message).toContain('25000');
  });
});

describe('payroll in production', () => {
  it('refuses cancellation outside the sandbox', async () => {
    const prod = await startLocalStack({ env: { PAYROLL_ENVIRONMENT: 'production' } });
    try {
      const org = await prod.createOrganization('Prod Co');
      expect(org.token).toMatch(/^pk_live_/);
      const res = await prod.request('POST', '/v1/payroll/pay_x/cancel', { token: org.token });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'sandbox_only', message: 'Cancellation is only available in the sandbox' });
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
      const emp = await first.request('POST', '/v1/employees', { token: org.token, body: {
        first_name: 'Rita', last_name: 'Restart', email: 'rita@example.com', employment_type: 'full_time', pay_group: 'default',
        pay_schedule: 'biweekly', start_date: '2026-01-05', bank_account: { account_number: '31415926', routing_number: '021000021', account_type: 'checking' },
      } });
      const submitted = await first.request('POST', '/v1/payroll', { token: org.token, body: {
        pay_period_start: '2026-03-01', pay_period_end: '2026-03-14', pay_date: '2026-03-20',
        employees: [{ employee_id: emp.body.data.employee_id, gross_pay: 1000, hours_worked: 40 }],
      } });
      expect(submitted.status).toBe(202);
      await first.stop();

      const second = await startLocalStack({ dir });
      try {
        expect(second.output()).toContain('Resumed 1 unfinished payroll run(s)');
        const id = submitted.body.data.payroll_id;
        const deadline = Date.now() + 20_000;
        let status = 'pending';
        while (!['completed', 'failed', 'rejected'].includes(status) && Date.now() < deadline) {
          status = (await second.request('GET', `/v1/payroll/${id}`, { token: org.token })).body.data.status;
        }
        expect(status).toBe('completed');
        expect((await second.request('GET', `/v1/payroll/${id}/disbursement`, { token: org.token })).status).toBe(200);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
