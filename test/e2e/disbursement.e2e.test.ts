import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  dateInTimeZone,
  earliestPayDate,
  effectiveEntryDate,
  releaseBy,
} from '../../shared/domain/banking-calendar.js';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import {
  assertBankRules,
  assertDistinctModifiers,
  assertTracesAcrossFiles,
  readNacha,
  type ReadEntry,
  type ReadFile,
} from '../support/nacha-check.js';
import {
  asReceived,
  typedClient,
  type components,
  type operations,
  type TypedClient,
} from '../support/typed-client.js';

/**
 * Disbursement files as a client sees them over HTTPS: the settlement dates every payroll answer carries, the NACHA
 * file's header, modifiers and trace numbers, balanced files drawn on a funding account, the originator's
 * validation, names written as ACH text, and what production refuses (placeholder originators, pay dates whose
 * file could no longer reach the bank in time). Every file is read with two independent parsers (`readNacha`)
 * and checked against the bank's rules. Every call here is one the document describes: all go through the typed
 * client, so every answer is also checked against docs/openapi.json.
 */

type Submission = components['schemas']['PayrollSubmission'];
type SettingsPatch = operations['updateSettings']['requestBody']['content']['application/json'];
type OriginatorPatch = NonNullable<SettingsPatch['originator']>;

interface Org {
  stack: RunningStack;
  api: TypedClient;
  token: string;
}

const NEW_YORK = 'America/New_York';
const DAY_MS = 86_400_000;
/** The originator fields a production organization starts with as placeholders. */
const PLACEHOLDER_FIELDS = [
  'company_identification',
  'originating_dfi_identification',
  'immediate_destination',
  'immediate_destination_name',
  'immediate_origin',
  'immediate_origin_name',
] as const;

const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
const newYorkToday = () => dateInTimeZone(new Date(), NEW_YORK).date;
const at = (id: string) => ({ params: { path: { id } } });
const dryRun = { params: { query: { dry_run: 'true' as const } } };
const entriesOf = (file: ReadFile): ReadEntry[] => file.batches.flatMap((b) => b.entries);
const cents = (amount: number) => Math.round(amount * 100);
const fieldsOf = (details: ReadonlyArray<{ field?: string }>) => new Set(details.map((d) => d.field));

async function newOrg(stack: RunningStack, name: string): Promise<Org> {
  const { token } = await stack.createOrganization(name);
  return { stack, token, api: typedClient(stack, token) };
}

let seq = 0;
async function hire(org: Org, first = 'Pat', last = `Payee ${seq}`): Promise<string> {
  const n = seq++;
  const res = await org.api.POST('/v1/employees', {
    body: {
      first_name: first,
      last_name: last,
      email: `payee${n}@example.com`,
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2020-01-06',
      bank_account: { account_number: String(60_000_000 + n), routing_number: '021000021', account_type: 'checking' },
    },
  });
  expect(res.response.status, asReceived(res.response).text).toBe(201);
  return res.data!.data.employee_id;
}

async function patchSettings(org: Org, body: SettingsPatch) {
  const res = await org.api.PATCH('/v1/settings', { body });
  expect(res.response.status, asReceived(res.response).text).toBe(200);
  return res;
}

/** A run paid on `payDate` for the two weeks before it: its own pay period for each distinct pay date. */
function paying(ids: string[], payDate: string, extra: Partial<Submission> = {}): Submission {
  return {
    pay_period_start: addDays(payDate, -14),
    pay_period_end: addDays(payDate, -1),
    pay_date: payDate,
    employees: ids.map((id, i) => ({
      employee_id: id,
      gross_pay: 1000 + 100 * i,
      hours_worked: 80,
      deductions: { taxes: 200.25 },
    })),
    ...extra,
  };
}

async function submit(org: Org, body: Submission) {
  const res = await org.api.POST('/v1/payroll', { body });
  expect(res.response.status, asReceived(res.response).text).toBe(202);
  const data = res.data!.data;
  if (!('payroll_id' in data)) throw new Error(`not an accepted submission: ${JSON.stringify(data)}`);
  return data;
}

/** Polls until the run reaches a terminal status (bounded), so a wrong outcome fails at once instead of timing out. */
function settled(org: Org, payrollId: string) {
  return vi.waitFor(
    async () => {
      const run = (await org.api.GET('/v1/payroll/{id}', at(payrollId))).data!.data;
      if (!['completed', 'rejected', 'failed', 'cancelled'].includes(run.status))
        throw new Error(`payroll ${payrollId} not settled within 20000 ms: still ${run.status}`);
      return run;
    },
    { timeout: 20_000, interval: 50 },
  );
}

/** The run's NACHA file as both parsers read it (they must agree, and achkit's validator must accept it). */
async function nachaOf(org: Org, payrollId: string): Promise<ReadFile> {
  const res = await org.api.GET('/v1/payroll/{id}/disbursement', { ...at(payrollId), parseAs: 'text' });
  expect(res.response.status).toBe(200);
  expect(res.response.headers.get('content-type')).toMatch(/^text\/plain/);
  return readNacha(res.data!);
}

/** The file's control totals (`Accept: application/json`), and the answer's text as it arrived. */
async function controlOf(org: Org, payrollId: string) {
  const res = await org.api.GET('/v1/payroll/{id}/disbursement', {
    params: { path: { id: payrollId }, header: { Accept: 'application/json' } },
  });
  expect(res.response.status).toBe(200);
  return { control: res.data!.data, text: asReceived(res.response).text };
}

/** Waits for a submitted run to complete and reads its file. */
async function completion(org: Org, submitted: Awaited<ReturnType<typeof submit>>) {
  const done = await settled(org, submitted.payroll_id);
  expect(done.status, JSON.stringify(done)).toBe('completed');
  return { submitted, done, file: await nachaOf(org, submitted.payroll_id) };
}

/** Submits, waits for completion and reads the file: the common path of most tests here. */
async function completedRun(org: Org, body: Submission) {
  return completion(org, await submit(org, body));
}

/** Each paystub's deposit is the file's entry for that employee, with the same trace number and amount. */
async function expectPaystubsMatchFile(org: Org, payrollId: string, file: ReadFile, employeeIds: string[]) {
  const res = await org.api.GET('/v1/paystubs', { params: { query: { payroll_id: payrollId, limit: 100 } } });
  expect(res.response.status).toBe(200);
  const stubs = res.data!.data.paystubs;
  expect(stubs.map((s) => s.employee_id).sort()).toEqual([...employeeIds].sort());
  const byId = new Map(entriesOf(file).map((e) => [e.individualId, e]));
  for (const stub of stubs) {
    const entry = byId.get(stub.employee_id.slice(-15).toUpperCase());
    expect(entry, `the file has an entry for ${stub.employee_id}`).toBeDefined();
    expect(stub.payment.trace_number, stub.employee_id).toBe(entry!.traceNumber);
    expect(cents(stub.net_pay), stub.employee_id).toBe(entry!.amountCents);
  }
}

/** The header's creation date and time are the New York wall clock of the file's `created_at`. */
function expectCreatedInNewYork(file: ReadFile, createdAt: string) {
  const created = dateInTimeZone(new Date(createdAt), NEW_YORK);
  expect(file.header).toMatchObject({ creationDate: created.date, creationTime: created.time });
}

// ---------------------------------------------------------------------------------------------------------------

describe('disbursement files in the sandbox', () => {
  let stack: RunningStack;
  let org: Org;

  beforeAll(async () => {
    stack = await startLocalStack();
    org = await newOrg(stack, 'Disbursement E2E');
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('answers effective_entry_date and release_by on the dry run, the 202, GET, the list and in the file', async () => {
    const ids = [await hire(org)];
    const cases = [
      { pay: '2026-11-28', effective: '2026-11-27', release: '2026-11-25' }, // a Saturday; Thanksgiving on the 26th
      { pay: '2026-09-07', effective: '2026-09-04', release: '2026-09-03' }, // Labor Day
      { pay: '2026-12-25', effective: '2026-12-24', release: '2026-12-23' }, // Christmas
      { pay: '2026-11-20', effective: '2026-11-20', release: '2026-11-19' }, // a plain Friday
    ];
    const submitted: string[] = [];
    for (const c of cases) {
      const dates = { pay_date: c.pay, effective_entry_date: c.effective, release_by: c.release };
      const body = paying(ids, c.pay);
      const dry = await org.api.POST('/v1/payroll', { ...dryRun, body });
      expect(dry.response.status).toBe(200);
      expect(dry.data!.data, c.pay).toMatchObject(dates);
      const accepted = await submit(org, body);
      expect(accepted, c.pay).toMatchObject(dates);
      expect((await org.api.GET('/v1/payroll/{id}', at(accepted.payroll_id))).data!.data, c.pay).toMatchObject(dates);
      submitted.push(accepted.payroll_id);
    }
    const list = await org.api.GET('/v1/payroll', { params: { query: { limit: 100 } } });
    expect(list.response.status).toBe(200);
    cases.forEach((c, i) => {
      const item = list.data!.data.payrolls.find((p) => p.payroll_id === submitted[i]);
      expect(item, c.pay).toMatchObject({ pay_date: c.pay, effective_entry_date: c.effective, release_by: c.release });
    });

    for (const [i, c] of cases.entries()) {
      const id = submitted[i]!;
      const done = await settled(org, id);
      expect(done.status).toBe('completed');
      expect(done).toMatchObject({ effective_entry_date: c.effective, release_by: c.release });
      expect(done.disbursement!.effective_entry_date, c.pay).toBe(c.effective);
      const file = await nachaOf(org, id);
      expect(
        file.batches.map((b) => b.effectiveEntryDate),
        c.pay,
      ).toEqual([c.effective]);
      assertBankRules(file, { payDate: c.pay, balanced: false });
      expect((await controlOf(org, id)).control.effective_entry_date).toBe(c.effective);
    }
  });

  it('dates the header in New York time, gives same-day files new modifiers and traces that follow on', async () => {
    const trace = await newOrg(stack, 'Trace Co');
    const originator = (await trace.api.GET('/v1/settings')).data!.data.originator;
    const odfi = originator.originating_dfi_identification;
    const ids = [await hire(trace), await hire(trace)];

    const first = await completedRun(trace, paying(ids, '2026-10-16'));
    const second = await completedRun(trace, paying(ids, '2026-10-16', { type: 'off_cycle' }));
    const runs = [first, second];

    for (const { submitted, done, file } of runs) {
      expectCreatedInNewYork(file, done.disbursement!.created_at);
      expect(file.header).toMatchObject({
        immediateDestination: originator.immediate_destination,
        immediateOrigin: originator.immediate_origin.trim(),
        fileIdModifier: done.disbursement!.file_id_modifier,
      });
      expect(file.batches).toHaveLength(1);
      expect(file.batches[0]).toMatchObject({
        serviceClass: 220,
        sec: 'PPD',
        companyName: originator.company_name,
        companyId: originator.company_identification,
        odfi,
        effectiveEntryDate: '2026-10-16',
      });
      assertBankRules(file, { payDate: '2026-10-16', balanced: false });

      const { control } = await controlOf(trace, submitted.payroll_id);
      expect(control).toEqual({ payroll_id: submitted.payroll_id, ...done.disbursement! });
      expect(control).toMatchObject({
        total_debit: 0,
        total_credit: submitted.totals.net_pay,
        entry_count: 2,
        file_id_modifier: file.header.fileIdModifier,
        effective_entry_date: '2026-10-16',
      });
      expect(cents(control.total_credit)).toBe(file.control.totalCreditCents);
      await expectPaystubsMatchFile(trace, submitted.payroll_id, file, ids);
    }

    // The organization's first file of the day is A, its second B (unless New York's midnight fell in between).
    const [a, b] = runs.map((r) => r.file.header);
    expect(a!.fileIdModifier).toBe('A');
    expect(b!.fileIdModifier).toBe(a!.creationDate === b!.creationDate ? 'B' : 'A');
    assertDistinctModifiers(runs.map((r) => r.file));
    assertTracesAcrossFiles(runs.map((r) => r.file));
    // The organization's trace sequence starts at 1 and the second file's block follows the first's.
    expect(runs.map((r) => entriesOf(r.file).map((e) => e.traceNumber))).toEqual([
      [`${odfi}0000001`, `${odfi}0000002`],
      [`${odfi}0000003`, `${odfi}0000004`],
    ]);
  });

  it('gives runs processed at the same time their own modifiers and trace blocks', async () => {
    const busy = await newOrg(stack, 'Busy Co');
    const ids = [await hire(busy), await hire(busy)];
    // Submitted together, so their plans (and reservations) race one another.
    const body = paying(ids, '2026-10-09', { type: 'off_cycle' });
    const submitted = await Promise.all([0, 1, 2].map(() => submit(busy, body)));
    const runs = await Promise.all(submitted.map((s) => completion(busy, s)));
    const files = runs.map((r) => r.file);
    for (const file of files) assertBankRules(file, { payDate: '2026-10-09', balanced: false });
    // In the order their blocks were reserved: each block after the one before, no trace used twice.
    const firstTrace = (f: ReadFile) => entriesOf(f)[0]!.traceNumber;
    const byFirstTrace = [...files].sort((x, y) => firstTrace(x).localeCompare(firstTrace(y)));
    assertTracesAcrossFiles(byFirstTrace);
    assertDistinctModifiers(files);
    const traces = files.flatMap((f) => entriesOf(f).map((e) => Number(e.traceNumber.slice(8)))).sort((x, y) => x - y);
    expect(traces).toEqual([1, 2, 3, 4, 5, 6]);
    if (new Set(files.map((f) => f.header.creationDate)).size === 1) {
      expect(files.map((f) => f.header.fileIdModifier).sort()).toEqual(['A', 'B', 'C']);
    }
    for (const r of runs) await expectPaystubsMatchFile(busy, r.submitted.payroll_id, r.file, ids);
  });

  it('stores a funding account, answers only its last 4 digits, balances each file with an offset debit', async () => {
    const funded = await newOrg(stack, 'Funding Co');
    const bodies: string[] = [];
    const savings = { routing_number: '011000015', account_number: '55501234567', account_type: 'savings' } as const;
    const checking = { routing_number: '021000021', account_number: '44409876543', account_type: 'checking' } as const;
    const companyName = (await funded.api.GET('/v1/settings')).data!.data.originator.company_name;
    const ids = [await hire(funded), await hire(funded)];

    // Validated as an employee's account, and a refusal does not echo the number either.
    const bad = await funded.api.PATCH('/v1/settings', {
      body: {
        funding_account: { ...savings, routing_number: '021000022' },
      },
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error!.error.code).toBe('invalid_request_body');
    expect(fieldsOf(bad.error!.error.details)).toEqual(new Set(['funding_account.routing_number']));
    const short = await funded.api.PATCH('/v1/settings', {
      body: { funding_account: { ...savings, account_number: '12' } },
    });
    expect(short.response.status).toBe(400);
    expect(fieldsOf(short.error!.error.details)).toEqual(new Set(['funding_account.account_number']));
    bodies.push(asReceived(bad.response).text);
    expect((await funded.api.GET('/v1/settings')).data!.data.funding_account).toBeNull();

    const set = await patchSettings(funded, { funding_account: savings });
    const savingsView = { routing_number: '011000015', account_number_last4: '4567', account_type: 'savings' };
    expect(set.data!.data.funding_account).toEqual(savingsView);
    const read = await funded.api.GET('/v1/settings');
    expect(read.data!.data.funding_account).toEqual(savingsView);
    bodies.push(asReceived(set.response).text, asReceived(read.response).text);

    // Balanced with the savings account: the offset is a savings debit (37) for the credits' total.
    const one = await completedRun(funded, paying(ids, '2026-10-30'));
    assertBankRules(one.file, {
      payDate: '2026-10-30',
      balanced: true,
      fundingAccount: { routing: savings.routing_number, account: savings.account_number, accountType: 'savings' },
    });
    const [credit1, credit2, offset] = entriesOf(one.file);
    expect(offset).toMatchObject({
      transactionCode: 37,
      routing: '011000015',
      account: '55501234567',
      individualName: companyName,
      amountCents: credit1!.amountCents + credit2!.amountCents,
    });
    expect(BigInt(offset!.traceNumber)).toBe(BigInt(credit2!.traceNumber) + 1n);
    expect(one.done.disbursement).toMatchObject({
      entry_count: 3,
      total_credit: one.submitted.totals.net_pay,
      total_debit: one.submitted.totals.net_pay,
    });
    const control1 = await controlOf(funded, one.submitted.payroll_id);
    expect(control1.control.total_debit).toBe(control1.control.total_credit);
    expect(cents(control1.control.total_debit)).toBe(one.file.control.totalDebitCents);
    await expectPaystubsMatchFile(funded, one.submitted.payroll_id, one.file, ids);

    // Replaced by a checking account: the next file's offset is a checking debit (27).
    const replaced = await patchSettings(funded, { funding_account: checking });
    expect(replaced.data!.data.funding_account).toEqual({
      routing_number: '021000021',
      account_number_last4: '6543',
      account_type: 'checking',
    });
    const two = await completedRun(funded, paying(ids, '2026-10-30', { type: 'off_cycle' }));
    assertBankRules(two.file, {
      payDate: '2026-10-30',
      balanced: true,
      fundingAccount: { routing: checking.routing_number, account: checking.account_number, accountType: 'checking' },
    });
    expect(entriesOf(two.file).at(-1)).toMatchObject({ transactionCode: 27, account: '44409876543' });
    const control2 = await controlOf(funded, two.submitted.payroll_id);
    expect(control2.control.total_debit).toBe(control2.control.total_credit);

    // Removed: the next file is credits only again.
    const removed = await patchSettings(funded, { funding_account: null });
    expect(removed.data!.data.funding_account).toBeNull();
    expect((await funded.api.GET('/v1/settings')).data!.data.funding_account).toBeNull();
    const three = await completedRun(funded, paying(ids, '2026-11-13'));
    assertBankRules(three.file, { payDate: '2026-11-13', balanced: false });
    expect(entriesOf(three.file)).toHaveLength(2);
    const control3 = await controlOf(funded, three.submitted.payroll_id);
    expect(control3.control).toMatchObject({ total_debit: 0, total_credit: three.submitted.totals.net_pay });

    // The offsets' trace numbers are the organization's too: each file's block follows the one before.
    assertTracesAcrossFiles([one.file, two.file, three.file]);

    bodies.push(asReceived(replaced.response).text, control1.text, control2.text, control3.text);
    for (const run of [one, two, three]) {
      bodies.push(asReceived((await funded.api.GET('/v1/payroll/{id}', at(run.submitted.payroll_id))).response).text);
    }
    bodies.push(asReceived((await funded.api.GET('/v1/payroll', { params: { query: { limit: 100 } } })).response).text);
    for (const text of bodies) {
      expect(text).not.toContain(savings.account_number);
      expect(text).not.toContain(checking.account_number);
    }
  });

  it('validates originator fields at PATCH, naming each one, and writes accepted values into the file', async () => {
    const named = await newOrg(stack, 'Originator Co');
    const before = (await named.api.GET('/v1/settings')).data!.data.originator;
    const ids = [await hire(named)];
    const defaultRun = await completedRun(named, paying(ids, '2026-12-04'));

    const refused: Array<[keyof OriginatorPatch, string]> = [
      ['immediate_destination', '021000022'], // wrong check digit
      ['immediate_destination', '000000000'], // a placeholder, although its check digit is valid
      ['immediate_destination', '02100002'],
      ['immediate_origin', 'acmepayrol'],
      ['immediate_origin', '0000000000'],
      ['immediate_origin', 'ACME'],
      ['company_identification', '12345'],
      ['company_identification', '0000000000'],
      ['originating_dfi_identification', '00000000'],
      ['company_name', 'Acmé'],
      ['immediate_destination_name', 'Acme™'],
      ['immediate_origin_name', '   '],
    ];
    for (const [field, value] of refused) {
      const res = await named.api.PATCH('/v1/settings', { body: { originator: { [field]: value } } });
      expect(res.response.status, `${field} = ${JSON.stringify(value)}`).toBe(400);
      expect(res.error!.error.code).toBe('invalid_request_body');
      expect(fieldsOf(res.error!.error.details), `${field} = ${value}`).toEqual(new Set([`originator.${field}`]));
    }
    const several = await named.api.PATCH('/v1/settings', {
      body: {
        originator: {
          immediate_destination: '021000022',
          immediate_origin: 'acmepayrol',
          company_identification: '12345',
          company_name: 'Acmé',
          immediate_origin_name: 'Acme™',
          immediate_destination_name: 'First Bank',
        },
      },
    });
    expect(several.response.status).toBe(400);
    expect(fieldsOf(several.error!.error.details)).toEqual(
      new Set([
        'originator.immediate_destination',
        'originator.immediate_origin',
        'originator.company_identification',
        'originator.company_name',
        'originator.immediate_origin_name',
      ]),
    );
    // Nothing of a refused PATCH is stored, not even its valid field.
    expect((await named.api.GET('/v1/settings')).data!.data.originator).toEqual(before);

    const accepted = await patchSettings(named, {
      originator: {
        company_name: 'Acme Payroll',
        company_identification: 'ACME000001',
        immediate_destination: '021000021',
        immediate_destination_name: 'First Test Bank',
        immediate_origin: 'ACMEPAYROL',
        immediate_origin_name: 'Acme, Inc.',
      },
    });
    expect(accepted.data!.data.originator).toEqual({
      ...before,
      company_name: 'ACME PAYROLL',
      company_identification: 'ACME000001',
      immediate_destination: '021000021',
      immediate_destination_name: 'FIRST TEST BANK',
      immediate_origin: 'ACMEPAYROL',
      immediate_origin_name: 'ACME, INC.',
    });
    await patchSettings(named, { originator: { immediate_origin: ' 021000021' } });
    const stored = (await named.api.GET('/v1/settings')).data!.data.originator;
    expect(stored).toMatchObject({ immediate_origin: ' 021000021', company_name: 'ACME PAYROLL' });

    // The file carries what was stored; a new destination starts its own modifiers, the ODFI's traces go on.
    const second = await completedRun(named, paying(ids, '2026-12-04', { type: 'off_cycle' }));
    const third = await completedRun(named, paying(ids, '2026-12-04', { type: 'off_cycle' }));
    for (const { file } of [second, third]) {
      expect(file.header).toMatchObject({ immediateDestination: '021000021', immediateOrigin: '021000021' });
      expect(file.batches[0]).toMatchObject({
        companyName: 'ACME PAYROLL',
        companyId: 'ACME000001',
        odfi: before.originating_dfi_identification,
      });
      assertBankRules(file, { payDate: '2026-12-04', balanced: false });
    }
    expect(defaultRun.file.header).toMatchObject({
      immediateDestination: before.immediate_destination,
      fileIdModifier: 'A',
    });
    const [h2, h3] = [second.file.header, third.file.header];
    expect(h2.fileIdModifier).toBe('A');
    expect(h3.fileIdModifier).toBe(h2.creationDate === h3.creationDate ? 'B' : 'A');
    assertDistinctModifiers([defaultRun.file, second.file, third.file]);
    assertTracesAcrossFiles([defaultRun.file, second.file, third.file]);
  });

  it("writes employees' names as ACH text, and the employee id when nothing is left of the name", async () => {
    const people = [
      { first: 'Søren', last: 'Ødegård', expected: 'SOREN ODEGARD' },
      { first: 'Łukasz', last: 'Żółć', expected: 'LUKASZ ZOLC' },
      { first: 'Jürgen', last: 'Müller', expected: 'JURGEN MULLER' },
      { first: '李', last: '小龙', expected: undefined },
    ];
    const ids: string[] = [];
    for (const p of people) ids.push(await hire(org, p.first, p.last));
    const run = await completedRun(org, paying(ids, '2026-08-14'));
    assertBankRules(run.file, { payDate: '2026-08-14', balanced: false });
    const byId = new Map(entriesOf(run.file).map((e) => [e.individualId, e]));
    people.forEach((p, i) => {
      const tail = ids[i]!.slice(-15).toUpperCase();
      expect(byId.get(tail)?.individualName, `${p.first} ${p.last}`).toBe(p.expected ?? tail);
    });
    await expectPaystubsMatchFile(org, run.submitted.payroll_id, run.file, ids);
  });

  it('accepts any pay date in the sandbox, past ones included', async () => {
    const ids = [await hire(org)];
    const recent = addDays(newYorkToday(), -2);
    const cases = [
      { pay: recent, effective: effectiveEntryDate(recent), release: releaseBy(recent) },
      // Juneteenth 2021 fell on a Saturday: the Federal Reserve was open on Friday the 18th.
      { pay: '2021-06-18', effective: '2021-06-18', release: '2021-06-17' },
    ];
    for (const c of cases) {
      const dates = { pay_date: c.pay, effective_entry_date: c.effective, release_by: c.release };
      // Off-cycle: a date relative to today must not run into another test's pay period.
      const body = paying(ids, c.pay, { type: 'off_cycle' });
      const dry = await org.api.POST('/v1/payroll', { ...dryRun, body });
      expect(dry.response.status, asReceived(dry.response).text).toBe(200);
      expect(dry.data!.data).toMatchObject(dates);
      const run = await completedRun(org, body);
      expect(run.submitted).toMatchObject(dates);
      expect(run.file.batches[0]!.effectiveEntryDate).toBe(c.effective);
      assertBankRules(run.file, { payDate: c.pay, balanced: false });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('disbursement files in production', () => {
  let prod: RunningStack;

  /** Real-looking values for every placeholder field. */
  const configured = {
    company_identification: '1234567890',
    originating_dfi_identification: '02100002',
    immediate_destination: '021000021',
    immediate_destination_name: 'JPMORGAN CHASE',
    immediate_origin: '9876543210',
    immediate_origin_name: 'PROD PAYROLL',
  } satisfies OriginatorPatch;

  beforeAll(async () => {
    prod = await startLocalStack({ env: { PAYROLL_ENVIRONMENT: 'production' } });
  });

  afterAll(async () => {
    await prod?.stop();
  });

  /** A 422 answer to a submission or its dry run: its error. */
  async function refusal(org: Org, body: Submission, asDryRun: boolean) {
    const res = asDryRun
      ? await org.api.POST('/v1/payroll', { ...dryRun, body })
      : await org.api.POST('/v1/payroll', { body });
    expect(res.response.status, asReceived(res.response).text).toBe(422);
    return res.error!.error;
  }

  it('refuses payroll while the originator holds placeholders, naming each one', async () => {
    const org = await newOrg(prod, 'Placeholder Co');
    expect(org.token).toMatch(/^pk_live_/);
    expect((await org.api.GET('/v1/settings')).data!.data.originator).toMatchObject({
      company_identification: '0000000000',
      originating_dfi_identification: '00000000',
      immediate_destination: '000000000',
      immediate_destination_name: 'NOT CONFIGURED',
      immediate_origin: '0000000000',
      immediate_origin_name: 'NOT CONFIGURED',
    });
    const ids = [await hire(org)];
    const body = paying(ids, addDays(newYorkToday(), 14));

    for (const asDryRun of [true, false]) {
      const error = await refusal(org, body, asDryRun);
      expect(error.code).toBe('originator_not_configured');
      expect(error.details).toHaveLength(PLACEHOLDER_FIELDS.length);
      expect(error.details.every((d) => d.code === 'originator_not_configured')).toBe(true);
      expect(fieldsOf(error.details)).toEqual(new Set(PLACEHOLDER_FIELDS.map((f) => `originator.${f}`)));
    }
    expect((await org.api.GET('/v1/payroll', { params: { query: { limit: 100 } } })).data!.data.payrolls).toEqual([]);

    // A placeholder cannot be set back as a value.
    const zeros = await org.api.PATCH('/v1/settings', {
      body: { originator: { company_identification: '0000000000' } },
    });
    expect(zeros.response.status).toBe(400);

    // Until the last placeholder is replaced, that one is named.
    const { immediate_origin_name: last, ...allButOne } = configured;
    await patchSettings(org, { originator: allButOne });
    const one = await refusal(org, body, true);
    expect(one.details).toEqual([
      expect.objectContaining({
        field: 'originator.immediate_origin_name',
        code: 'originator_not_configured',
      }),
    ]);

    const done = await patchSettings(org, { originator: { immediate_origin_name: last } });
    expect(done.data!.data.originator).toMatchObject(configured);
    const dry = await org.api.POST('/v1/payroll', { ...dryRun, body });
    expect(dry.response.status, asReceived(dry.response).text).toBe(200);
    expect(dry.data!.data).toMatchObject({
      pay_date: body.pay_date,
      effective_entry_date: effectiveEntryDate(body.pay_date),
      release_by: releaseBy(body.pay_date),
    });
  });

  it('refuses a pay date whose file is already due, answering the earliest, and pays on that date', async () => {
    const org = await newOrg(prod, 'Prod Payroll Co');
    // Runs approved when accepted: this test is about the file, not approval (a new production organization requires it).
    await patchSettings(org, { originator: configured, payroll_approval: 'automatic' });
    const ids = [await hire(org), await hire(org)];

    const todayBefore = newYorkToday();
    const late = paying(ids, addDays(todayBefore, -2));
    const errors = [await refusal(org, late, true), await refusal(org, late, false)];
    // Today as New York sees it, before and after the requests: one date unless midnight fell in between.
    const earliest = [earliestPayDate(todayBefore), earliestPayDate(newYorkToday())];
    for (const error of errors) {
      expect(error.code).toBe('pay_date_too_soon');
      expect(error.details).toHaveLength(1);
      expect(error.details[0]).toMatchObject({
        field: 'pay_date',
        code: 'pay_date_too_soon',
        release_by: releaseBy(late.pay_date),
      });
      expect(earliest).toContain(error.details[0]!.earliest_pay_date);
    }
    const soonest = String(errors[1]!.details[0]!.earliest_pay_date);

    const files: ReadFile[] = [];
    for (const payDate of [soonest, addDays(todayBefore, 14)]) {
      const run = await completedRun(org, paying(ids, payDate));
      expect(run.submitted).toMatchObject({
        pay_date: payDate,
        effective_entry_date: effectiveEntryDate(payDate),
        release_by: releaseBy(payDate),
      });
      expect(run.submitted.release_by >= todayBefore, `release_by ${run.submitted.release_by} is not past`).toBe(true);
      expectCreatedInNewYork(run.file, run.done.disbursement!.created_at);
      expect(run.file.header).toMatchObject({ immediateDestination: '021000021', immediateOrigin: '9876543210' });
      expect(run.file.batches[0]).toMatchObject({
        companyId: '1234567890',
        odfi: '02100002',
        companyName: 'PROD PAYROLL CO',
      });
      assertBankRules(run.file, { payDate, balanced: false });
      await expectPaystubsMatchFile(org, run.submitted.payroll_id, run.file, ids);
      files.push(run.file);
    }
    assertTracesAcrossFiles(files);
    assertDistinctModifiers(files);
  });
});
