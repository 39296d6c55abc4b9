import { extractText, getDocumentProxy } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readNacha } from '../support/nacha-check.js';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { typedClient, type components, type operations, type TypedClient } from '../support/typed-client.js';

/**
 * Paystubs over HTTPS, through the client typed from the OpenAPI document. `stack.request` remains only for
 * requests outside the document the typed client cannot express: an unknown query parameter and methods the
 * paystub routes do not have.
 */
let stack: RunningStack;
let token: string;
let api: TypedClient;
let other: { token: string };
let otherApi: TypedClient;
const emp: string[] = [];
const runs: Record<string, string> = {};

type Submission = components['schemas']['PayrollSubmission'];
type Entry = Submission['employees'][number];
type PaystubQuery = NonNullable<operations['listPaystubs']['parameters']['query']>;

async function hire(t: string, n: number) {
  const res = await typedClient(stack, t).POST('/v1/employees', {
    body: {
      first_name: 'Sam',
      last_name: `Stub ${n}`,
      email: `sam${n}@example.com`,
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2026-01-01',
      bank_account: { account_number: String(81_000_000 + n), routing_number: '011000015', account_type: 'savings' },
    },
  });
  return res.data!.data.employee_id;
}

/** The path parameter of `/v1/…/{id}`. */
const at = (id: string) => ({ params: { path: { id } } });

async function pay(name: string, body: Submission) {
  const res = await api.POST('/v1/payroll', { body });
  expect(res.response.status).toBe(202);
  const submitted = res.data!.data;
  if (!('payroll_id' in submitted)) throw new Error('a dry run answer');
  const id = submitted.payroll_id;
  await vi.waitFor(
    async () => {
      const status = (await api.GET('/v1/payroll/{id}', at(id))).data!.data.status;
      expect(status, `payroll ${id} (${name}) completed within 20000 ms`).toBe('completed');
    },
    { timeout: 20_000, interval: 50 },
  );
  runs[name] = id;
  return id;
}

const entry = (id: string, gross: number, extra: Partial<Entry> = {}): Entry => ({
  employee_id: id,
  gross_pay: gross,
  hours_worked: 80,
  deductions: { taxes: 200, benefits: 50 },
  ...extra,
});
const list = async (query: PaystubQuery, client = api) => client.GET('/v1/paystubs', { params: { query } });
const ids = (res: { data?: { data: { paystubs: { paystub_id: string }[] } } }) =>
  res.data!.data.paystubs.map((p) => p.paystub_id);

beforeAll(async () => {
  stack = await startLocalStack();
  ({ token } = await stack.createOrganization('Stub Co'));
  api = typedClient(stack, token);
  other = await stack.createOrganization('Elsewhere');
  otherApi = typedClient(stack, other.token);
  for (let i = 0; i < 3; i++) emp.push(await hire(token, i));
  await pay('jan1', {
    pay_period_start: '2026-01-01',
    pay_period_end: '2026-01-14',
    pay_date: '2026-01-20',
    employees: emp.map((e, i) => entry(e, 1000 + i)),
  });
  await pay('jan2', {
    pay_period_start: '2026-01-15',
    pay_period_end: '2026-01-28',
    pay_date: '2026-02-03',
    employees: [entry(emp[0]!, 1100), entry(emp[1]!, 1200)],
  });
  await pay('retro', {
    type: 'off_cycle',
    pay_period_start: '2026-01-01',
    pay_period_end: '2026-01-14',
    pay_date: '2026-02-10',
    employees: [entry(emp[0]!, 0, { bonuses: 300, deductions: 0 })],
  });
});

afterAll(async () => {
  await stack?.stop();
});

describe('GET /v1/paystubs', () => {
  it('filters by payroll, by employee (pay date descending) and by both', async () => {
    const byRun = await list({ payroll_id: runs.jan1 });
    expect(byRun.response.status).toBe(200);
    expect(byRun.data!.data.paystubs).toHaveLength(3);
    expect(byRun.data!.data.next_page_token).toBeNull();
    const byEmployee = await list({ employee_id: emp[0] });
    expect(byEmployee.data!.data.paystubs.map((p) => p.pay_date)).toEqual(['2026-02-10', '2026-02-03', '2026-01-20']);
    const both = await list({ employee_id: emp[1], payroll_id: runs.jan2 });
    expect(both.data!.data.paystubs).toEqual([
      expect.objectContaining({ employee_id: emp[1], payroll_id: runs.jan2, gross_pay: 1200 }),
    ]);
  });

  it('selects paystubs whose period overlaps [from, to], with a date range alone complete', async () => {
    const secondHalf = await list({ from: '2026-01-15', to: '2026-01-20' });
    expect(secondHalf.data!.data.paystubs.map((p) => p.payroll_id)).toEqual([runs.jan2, runs.jan2]);
    const straddling = await list({ from: '2026-01-10', to: '2026-01-16' });
    expect(straddling.data!.data.paystubs).toHaveLength(6);
    expect(straddling.data!.data.paystubs.map((p) => p.pay_date)).toEqual([
      '2026-02-10',
      '2026-02-03',
      '2026-02-03',
      '2026-01-20',
      '2026-01-20',
      '2026-01-20',
    ]);
    expect((await list({ from: '2026-03-01' })).data!.data.paystubs).toEqual([]);
    expect((await list({ to: '2025-12-31' })).data!.data.paystubs).toEqual([]);
    expect((await list({ employee_id: emp[2], from: '2026-01-15' })).data!.data.paystubs).toEqual([]);
    expect((await list({ employee_id: emp[0], to: '2026-01-14' })).data!.data.paystubs).toHaveLength(2);
  });

  it('pages with no duplicate and no gap while new payrolls are written, and refuses altered or foreign tokens', async () => {
    const before = ids(await list({ limit: 100 }));
    expect(before).toHaveLength(6);
    const pageOf = (page_token?: string) => list({ limit: 2, page_token });
    const seen: string[] = [];
    let next: string | null = null;
    let page = 0;
    do {
      const res = await pageOf(next ?? undefined);
      expect(res.response.status).toBe(200);
      seen.push(...ids(res));
      next = res.data!.data.next_page_token;
      if (page++ === 0) {
        // A new run lands between pages: it sorts first (newest pay date), so the cursor neither repeats nor skips.
        await pay('feb', {
          pay_period_start: '2026-01-29',
          pay_period_end: '2026-02-11',
          pay_date: '2026-02-17',
          employees: [entry(emp[2]!, 999)],
        });
        const [payload, sig] = next!.split('.');
        expect((await list({ limit: 2, page_token: `${payload!.slice(0, -2)}AA.${sig}` })).error!.error.code).toBe(
          'invalid_page_token',
        );
        expect((await list({ limit: 2, page_token: next! }, otherApi)).response.status).toBe(400);
        expect((await list({ limit: 2, employee_id: emp[0], page_token: next! })).response.status).toBe(400);
      }
    } while (next);
    expect(seen).toEqual(before);
  });

  it('answers another organization with nothing: 404 by id, empty lists by its ids', async () => {
    const mine = ids(await list({ payroll_id: runs.jan1 }));
    const res = await otherApi.GET('/v1/paystubs/{id}', at(mine[0]!));
    expect(res.response.status).toBe(404);
    expect(res.error!.error.code).toBe('not_found');
    expect((await list({ payroll_id: runs.jan1 }, otherApi)).data!.data.paystubs).toEqual([]);
    expect((await list({ employee_id: emp[0] }, otherApi)).data!.data.paystubs).toEqual([]);
    expect((await list({ from: '2026-01-01' }, otherApi)).data!.data.paystubs).toEqual([]);
  });

  it('answers unknown ids and unpaid employees with an empty list', async () => {
    const fresh = await hire(token, 99);
    for (const q of [{ employee_id: fresh }, { employee_id: 'emp_unknown' }, { payroll_id: 'pay_unknown' }]) {
      const res = await list(q);
      expect(res.response.status).toBe(200);
      expect(res.data!.data).toEqual({ paystubs: [], next_page_token: null });
    }
  });

  it.each<[string, string, PaystubQuery]>([
    ['from=2026-02-30', 'from', { from: '2026-02-30' }],
    ['to=yesterday', 'to', { to: 'yesterday' }],
    ['from=2026-02-01&to=2026-01-01', 'to', { from: '2026-02-01', to: '2026-01-01' }],
    ['limit=0', 'limit', { limit: 0 }],
    ['limit=101', 'limit', { limit: 101 }],
    ['employee_id=', 'employee_id', { employee_id: '' }],
  ])('rejects %s with 400 naming %s', async (_, field, query) => {
    const res = await list(query);
    expect(res.response.status).toBe(400);
    expect(res.error!.error.details.map((d) => d.field)).toContain(field);
  });

  it('rejects status=issued with 400 naming status', async () => {
    // An unknown parameter: hostile input the typed client cannot express.
    const res = await stack.request('GET', '/v1/paystubs?status=issued', { token });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('status');
  });
});

describe('GET /v1/paystubs/{id}', () => {
  it('answers every field, the NACHA trace number and year-to-date totals', async () => {
    const [retroStub] = ids(await list({ payroll_id: runs.retro }));
    const res = await api.GET('/v1/paystubs/{id}', at(retroStub!));
    expect(res.response.status).toBe(200);
    const p = res.data!.data;
    expect(p).toMatchObject({
      paystub_id: retroStub,
      employee_id: emp[0],
      payroll_id: runs.retro,
      period_start: '2026-01-01',
      period_end: '2026-01-14',
      pay_date: '2026-02-10',
      status: 'issued',
      hours_worked: 80,
      gross_pay: 0,
      bonuses: 300,
      net_pay: 300,
      deductions: { total: 0 },
      benefits: 0,
      payment: {
        method: 'direct_deposit',
        account_type: 'savings',
        account_number_last4: emp[0] ? expect.any(String) : '',
        routing_number: '011000015',
        status: 'scheduled',
      },
      year_to_date: { gross_pay: 2100, bonuses: 300, deductions: 500, net_pay: 1900 },
    });
    expect(p.issued_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const file = await api.GET('/v1/payroll/{id}/disbursement', { ...at(runs.retro!), parseAs: 'text' });
    expect(file.data).toContain(p.payment.trace_number);
    const entries = readNacha(file.data!).batches.flatMap((b) => b.entries);
    expect(entries.find((e) => e.traceNumber === p.payment.trace_number)).toMatchObject({ amountCents: 30_000 });

    const [first] = ids(await list({ employee_id: emp[0], payroll_id: runs.jan1 }));
    const earliest = (await api.GET('/v1/paystubs/{id}', at(first!))).data!.data;
    expect(earliest.year_to_date).toEqual({ gross_pay: 1000, bonuses: 0, deductions: 250, net_pay: 750 });
    expect(earliest.deductions).toEqual({ taxes: 200, benefits: 50, total: 250 });
    expect(earliest.benefits).toBe(50);
  });

  it('answers a printable PDF that an independent reader reads back', async () => {
    const [stub] = ids(await list({ employee_id: emp[0], payroll_id: runs.jan1 }));
    const res = await api.GET('/v1/paystubs/{id}', {
      params: { path: { id: stub! }, header: { Accept: 'application/pdf' } },
      parseAs: 'arrayBuffer',
    });
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(res.data!);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(pdf)), { mergePages: true });
    expect(text).toContain('Stub Co');
    expect(text).toContain('Sam Stub 0');
    expect(text).toContain('$750.00');
    expect(text).toContain('Taxes');
    expect(text).toMatch(/\u2022{4}0000/);
    expect(text).not.toContain('81000000');
  });

  it('is read-only: every other method is 405', async () => {
    const [stub] = ids(await list({ payroll_id: runs.jan1 }));
    // Methods the document does not have for these paths: outside what the typed client can express.
    for (const [method, path] of [
      ['POST', '/v1/paystubs'],
      ['PUT', `/v1/paystubs/${stub}`],
      ['PATCH', `/v1/paystubs/${stub}`],
      ['DELETE', `/v1/paystubs/${stub}`],
      ['DELETE', '/v1/paystubs'],
    ]) {
      const res = await stack.request(method!, path!, { token, body: method === 'DELETE' ? undefined : {} });
      expect(res.status).toBe(405);
      expect(res.body.error.code).toBe('method_not_allowed');
    }
  });

  it('voids the paystubs of a cancelled run, keeps them readable, and leaves them out of year-to-date', async () => {
    expect((await api.POST('/v1/payroll/{id}/cancel', at(runs.jan2!))).response.status).toBe(200);
    const stubs = (await list({ payroll_id: runs.jan2 })).data!.data.paystubs;
    expect(stubs).toHaveLength(2);
    expect(stubs.every((s) => s.status === 'voided' && s.payment.status === 'cancelled')).toBe(true);
    const [retroStub] = ids(await list({ payroll_id: runs.retro }));
    const after = (await api.GET('/v1/paystubs/{id}', at(retroStub!))).data!.data;
    expect(after.year_to_date).toEqual({ gross_pay: 1000, bonuses: 300, deductions: 250, net_pay: 1050 });
  });

  it('carries year_to_date on every list item, equal to the single read, before and after a run is cancelled', async () => {
    const compare = async () => {
      for (const employee of emp) {
        const items = (await list({ employee_id: employee, limit: 100 })).data!.data.paystubs;
        expect(items.length).toBeGreaterThan(0);
        for (const item of items) {
          expect(item.year_to_date, item.paystub_id).toBeDefined();
          const single = (await api.GET('/v1/paystubs/{id}', at(item.paystub_id))).data!.data;
          expect(item.year_to_date, item.paystub_id).toEqual(single.year_to_date);
        }
      }
    };
    await compare();
    // A run of the year cancelled: every later paystub of its employees drops its amounts, in the list too.
    const [retroStub] = ids(await list({ payroll_id: runs.retro }));
    const before = (await list({ payroll_id: runs.retro })).data!.data.paystubs[0]!.year_to_date;
    expect((await api.POST('/v1/payroll/{id}/cancel', at(runs.jan1!))).response.status).toBe(200);
    const afterCancel = (await list({ payroll_id: runs.retro })).data!.data.paystubs[0]!;
    expect(afterCancel.paystub_id).toBe(retroStub);
    expect(afterCancel.year_to_date.gross_pay).toBeLessThan(before.gross_pay);
    await compare();
  });
});
