import { extractText, getDocumentProxy } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';

let stack: RunningStack;
let token: string;
let other: { token: string };
const emp: string[] = [];
const runs: Record<string, string> = {};

async function hire(t: string, n: number) {
  const res = await stack.request('POST', '/v1/employees', { token: t, body: {
    first_name: 'Sam', last_name: `Stub ${n}`, email: `sam${n}@example.com`, employment_type: 'full_time', pay_group: 'default',
    pay_schedule: 'biweekly', start_date: '2026-01-01', bank_account: { account_number: String(81_000_000 + n), routing_number: '011000015', account_type: 'savings' },
  } });
  return res.body.data.employee_id as string;
}

async function pay(name: string, body: Record<string, unknown>) {
  const res = await stack.request('POST', '/v1/payroll', { token, body });
  expect(res.status).toBe(202);
  const id = res.body.data.payroll_id as string;
  const deadline = Date.now() + 20_000;
  let status = 'pending';
  while (status !== 'completed' && Date.now() < deadline) status = (await stack.request('GET', `/v1/payroll/${id}`, { token })).body.data.status;
  expect(status).toBe('completed');
  runs[name] = id;
  return id;
}

const entry = (id: string, gross: number, extra: Record<string, unknown> = {}) => ({ employee_id: id, gross_pay: gross, hours_worked: 80, deductions: { taxes: 200, benefits: 50 }, ...extra });
const list = async (query: string, t = token) => stack.request('GET', `/v1/paystubs?${query}`, { token: t });
const ids = (res: { body: any }) => res.body.data.paystubs.map((p: { paystub_id: string }) => p.paystub_id) as string[];

beforeAll(async () => {
  stack = await startLocalStack();
  ({ token } = await stack.createOrganization('Stub Co'));
  other = await stack.createOrganization('Elsewhere');
  for (let i = 0; i < 3; i++) emp.push(await hire(token, i));
  await pay('jan1', { pay_period_start: '2026-01-01', pay_period_end: '2026-01-14', pay_date: '2026-01-20', employees: emp.map((e, i) => entry(e, 1000 + i)) });
  await pay('jan2', { pay_period_start: '2026-01-15', pay_period_end: '2026-01-28', pay_date: '2026-02-03', employees: [entry(emp[0]!, 1100), entry(emp[1]!, 1200)] });
  await pay('retro', { type: 'off_cycle', pay_period_start: '2026-01-01', pay_period_end: '2026-01-14', pay_date: '2026-02-10', employees: [entry(emp[0]!, 0, { bonuses: 300, deductions: 0 })] });
});

afterAll(async () => {
  await stack?.stop();
});

describe('GET /v1/paystubs', () => {
  it('filters by payroll, by employee (pay date descending) and by both', async () => {
    const byRun = await list(`payroll_id=${runs.jan1}`);
    expect(byRun.status).toBe(200);
    expect(byRun.body.data.paystubs).toHaveLength(3);
    expect(byRun.body.data.next_page_token).toBeNull();
    const byEmployee = await list(`employee_id=${emp[0]}`);
    expect(byEmployee.body.data.paystubs.map((p: { pay_date: string }) => p.pay_date)).toEqual(['2026-02-10', '2026-02-03', '2026-01-20']);
    const both = await list(`employee_id=${emp[1]}&payroll_id=${runs.jan2}`);
    expect(both.body.data.paystubs).toEqual([expect.objectContaining({ employee_id: emp[1], payroll_id: runs.jan2, gross_pay: 1200 })]);
  });

  it('selects paystubs whose period overlaps [from, to], with a date range alone complete', async () => {
    const secondHalf = await list('from=2026-01-15&to=2026-01-20');
    expect(secondHalf.body.data.paystubs.map((p: { payroll_id: string }) => p.payroll_id)).toEqual([runs.jan2, runs.jan2]);
    const straddling = await list('from=2026-01-10&to=2026-01-16');
    expect(straddling.body.data.paystubs).toHaveLength(6);
    expect(straddling.body.data.paystubs.map((p: { pay_date: string }) => p.pay_date)).toEqual(
      ['2026-02-10', '2026-02-03', '2026-02-03', '2026-01-20', '2026-01-20', '2026-01-20']);
    expect((await list('from=2026-03-01')).body.data.paystubs).toEqual([]);
    expect((await list('to=2025-12-31')).body.data.paystubs).toEqual([]);
    expect((await list(`employee_id=${emp[2]}&from=2026-01-15`)).body.data.paystubs).toEqual([]);
    expect((await list(`employee_id=${emp[0]}&to=2026-01-14`)).body.data.paystubs).toHaveLength(2);
  });

  it('pages with no duplicate and no gap while new payrolls are written, and refuses altered or foreign tokens', async () => {
    const before = ids(await list('limit=100'));
    expect(before).toHaveLength(6);
    const seen: string[] = [];
    let next: string | null = null;
    let page = 0;
    do {
      const res = await list(`limit=2${next ? `&page_token=${encodeURIComponent(next)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res));
      next = res.body.data.next_page_token;
      if (page++ === 0) {
        // A new run lands between pages: it sorts first (newest pay date), so the cursor neither repeats nor skips.
        await pay('feb', { pay_period_start: '2026-01-29', pay_period_end: '2026-02-11', pay_date: '2026-02-17', employees: [entry(emp[2]!, 999)] });
        const [payload, sig] = next!.split('.');
        expect((await list(`limit=2&page_token=${payload!.slice(0, -2)}AA.${sig}`)).body.error.code).toBe('invalid_page_token');
        expect((await list(`limit=2&page_token=${encodeURIComponent(next!)}`, other.token)).status).toBe(400);
        expect((await list(`limit=2&employee_id=${emp[0]}&page_token=${encodeURIComponent(next!)}`)).status).toBe(400);
      }
    } while (next);
    expect(seen).toEqual(before);
  });

  it('answers another organization with nothing: 404 by id, empty lists by its ids', async () => {
    const mine = ids(await list(`payroll_id=${runs.jan1}`));
    const res = await stack.request('GET', `/v1/paystubs/${mine[0]}`, { token: other.token });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await list(`payroll_id=${runs.jan1}`, other.token)).body.data.paystubs).toEqual([]);
    expect((await list(`employee_id=${emp[0]}`, other.token)).body.data.paystubs).toEqual([]);
    expect((await list('from=2026-01-01', other.token)).body.data.paystubs).toEqual([]);
  });

  it('answers unknown ids and unpaid employees with an empty list', async () => {
    const fresh = await hire(token, 99);
    for (const q of [`employee_id=${fresh}`, 'employee_id=emp_unknown', 'payroll_id=pay_unknown']) {
      const res = await list(q);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ paystubs: [], next_page_token: null });
    }
  });

  it.each([
    ['from=2026-02-30', 'from'], ['to=yesterday', 'to'], ['from=2026-02-01&to=2026-01-01', 'to'], ['limit=0', 'limit'], ['limit=101', 'limit'],
    ['status=issued', 'status'], ['employee_id=', 'employee_id'],
  ])('rejects %s with 400 naming %s', async (q, field) => {
    const res = await list(q);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });
});

describe('GET /v1/paystubs/{id}', () => {
  it('answers every field, the NACHA trace number and year-to-date totals', async () => {
    const [retroStub] = ids(await list(`payroll_id=${runs.retro}`));
    const res = await stack.request('GET', `/v1/paystubs/${retroStub}`, { token });
    expect(res.status).toBe(200);
    const p = res.body.data;
    expect(p).toMatchObject({
      paystub_id: retroStub, employee_id: emp[0], payroll_id: runs.retro, period_start: '2026-01-01', period_end: '2026-01-14', pay_date: '2026-02-10',
      status: 'issued', hours_worked: 80, gross_pay: 0, bonuses: 300, net_pay: 300, deductions: { total: 0 }, benefits: 0,
      payment: { method: 'direct_deposit', account_type: 'savings', account_number_last4: emp[0] ? expect.any(String) : '', routing_number: '011000015', status: 'scheduled' },
      year_to_date: { gross_pay: 2100, bonuses: 300, deductions: 500, net_pay: 1900 },
    });
    expect(p.issued_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const file = await stack.request('GET', `/v1/payroll/${runs.retro}/disbursement`, { token });
    expect(file.text).toContain(p.payment.trace_number);

    const [first] = ids(await list(`employee_id=${emp[0]}&payroll_id=${runs.jan1}`));
    const earliest = (await stack.request('GET', `/v1/paystubs/${first}`, { token })).body.data;
    expect(earliest.year_to_date).toEqual({ gross_pay: 1000, bonuses: 0, deductions: 250, net_pay: 750 });
    expect(earliest.deductions).toEqual({ taxes: 200, benefits: 50, total: 250 });
    expect(earliest.benefits).toBe(50);
  });

  it('answers a printable PDF that an independent reader reads back', async () => {
    const [stub] = ids(await list(`employee_id=${emp[0]}&payroll_id=${runs.jan1}`));
    const res = await stack.request('GET', `/v1/paystubs/${stub}`, { token, headers: { Accept: 'application/pdf' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.raw.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(res.raw)), { mergePages: true });
    expect(text).toContain('Stub Co');
    expect(text).toContain('Sam Stub 0');
    expect(text).toContain('$750.00');
    expect(text).toContain('Taxes');
    expect(text).toMatch(/\u2022{4}0000/);
    expect(text).not.toContain('81000000');
  });

  it('is read-only: every other method is 405', async () => {
    const [stub] = ids(await list(`payroll_id=${runs.jan1}`));
    for (const [method, path] of [['POST', '/v1/paystubs'], ['PUT', `/v1/paystubs/${stub}`], ['PATCH', `/v1/paystubs/${stub}`], ['DELETE', `/v1/paystubs/${stub}`], ['DELETE', '/v1/paystubs']]) {
      const res = await stack.request(method!, path!, { token, body: method === 'DELETE' ? undefined : {} });
      expect(res.status).toBe(405);
      expect(res.body.error.code).toBe('method_not_allowed');
    }
  });

  it('voids the paystubs of a cancelled run, keeps them readable, and leaves them out of year-to-date', async () => {
    expect((await stack.request('POST', `/v1/payroll/${runs.jan2}/cancel`, { token })).status).toBe(200);
    const stubs = (await list(`payroll_id=${runs.jan2}`)).body.data.paystubs;
    expect(stubs).toHaveLength(2);
    expect(stubs.every((s: { status: string; payment: { status: string } }) => s.status === 'voided' && s.payment.status === 'cancelled')).toBe(true);
    const [retroStub] = ids(await list(`payroll_id=${runs.retro}`));
    const after = (await stack.request('GET', `/v1/paystubs/${retroStub}`, { token })).body.data;
    expect(after.year_to_date).toEqual({ gross_pay: 1000, bonuses: 300, deductions: 250, net_pay: 1050 });
  });
});
