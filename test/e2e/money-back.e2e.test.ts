import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type BankReturn, bankReturnFile } from '../support/bank-return-file.js';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { assertDistinctModifiers, assertTracesAcrossFiles, type ReadFile, readNacha } from '../support/nacha-check.js';
import { asReceived, typedClient, type components, type TypedClient } from '../support/typed-client.js';

/**
 * Money coming back (CONTRACT §12), over HTTPS as an integrator and a bank see it: every file listed and read by the
 * two independent NACHA parsers; a funding debit returned by the bank's own file, the hold it puts on the
 * organization, re-debits and a wire; reversals of payments, their file, the voided paystubs and year-to-date, a
 * return of a reversal debit; and the rules (codes, counts, windows, once per payment, idempotency, concurrency).
 */

type Paystub = components['schemas']['Paystub'];
type Payroll = components['schemas']['Payroll'];
type Outcome = components['schemas']['BankReportOutcome'];

interface Org {
  api: TypedClient;
  odfi: string;
  companyId: string;
  companyName: string;
}

const at = (id: string) => ({ params: { path: { id } } });
const RDFI = '011000015';
const FUNDING = { routing_number: '021000021', account_number: '44409876543', account_type: 'checking' } as const;
let stack: RunningStack;
let seq = 0;

async function newOrg(name: string, funded = true): Promise<Org> {
  const { token } = await stack.createOrganization(name);
  const api = typedClient(stack, token);
  if (funded) {
    const set = await api.PATCH('/v1/settings', { body: { funding_account: FUNDING } });
    expect(set.response.status, asReceived(set.response).text).toBe(200);
  }
  const settings = (await api.GET('/v1/settings')).data!.data;
  return {
    api,
    odfi: settings.originator.immediate_destination.trim(),
    companyId: settings.originator.company_identification,
    companyName: settings.originator.company_name,
  };
}

async function hire(org: Org): Promise<{ id: string; account: string }> {
  const n = seq++;
  const account = String(81_000_000 + n);
  const res = await org.api.POST('/v1/employees', {
    body: {
      first_name: 'Money',
      last_name: `Back ${n}`,
      email: `money-back${n}@example.com`,
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2020-01-06',
      bank_account: { account_number: account, routing_number: RDFI, account_type: 'checking' },
    },
  });
  expect(res.response.status, asReceived(res.response).text).toBe(201);
  return { id: res.data!.data.employee_id, account };
}

const iso = (d: Date) => d.toISOString().slice(0, 10);
const DAY = 86_400_000;

/** An off-cycle run (no pay window to collide with) paid `daysAhead` from today, to completion. */
function submit(org: Org, ids: string[], daysAhead = 10, gross = 1500) {
  const payDate = new Date(Date.now() + daysAhead * DAY);
  return org.api.POST('/v1/payroll', {
    body: {
      type: 'off_cycle',
      pay_period_start: iso(new Date(payDate.getTime() - 19 * DAY)),
      pay_period_end: iso(new Date(payDate.getTime() - 5 * DAY)),
      pay_date: iso(payDate),
      employees: ids.map((id, i) => ({ employee_id: id, gross_pay: gross + i * 10, hours_worked: 80 })),
    },
  });
}

async function paid(
  org: Org,
  ids: string[],
  daysAhead = 10,
  gross = 1500,
): Promise<{ run: Payroll; stubs: Map<string, Paystub> }> {
  const res = await submit(org, ids, daysAhead, gross);
  expect(res.response.status, asReceived(res.response).text).toBe(202);
  const payrollId = (res.data!.data as { payroll_id: string }).payroll_id;
  const run = await vi.waitFor(
    async () => {
      const r = (await org.api.GET('/v1/payroll/{id}', at(payrollId))).data!.data;
      if (!['completed', 'rejected', 'failed', 'cancelled'].includes(r.status)) throw new Error(r.status);
      return r;
    },
    { timeout: 20_000, interval: 50 },
  );
  expect(run.status).toBe('completed');
  const stubs = new Map<string, Paystub>();
  for (const id of ids) stubs.set(id, await stubOf(org, payrollId, id));
  return { run, stubs };
}

async function stubOf(org: Org, payrollId: string, employeeId: string): Promise<Paystub> {
  const list = await org.api.GET('/v1/paystubs', {
    params: { query: { payroll_id: payrollId, employee_id: employeeId } },
  });
  const item = list.data!.data.paystubs[0]!;
  return (await org.api.GET('/v1/paystubs/{id}', at(item.paystub_id))).data!.data;
}

const run = async (org: Org, id: string) => (await org.api.GET('/v1/payroll/{id}', at(id))).data!.data;

/** The file's text, read by the two parsers. */
async function fileText(org: Org, fileId: string): Promise<{ text: string; read: ReadFile }> {
  const res = await org.api.GET('/v1/disbursement-files/{id}', { ...at(fileId), parseAs: 'text' });
  const text = asReceived(res.response).text;
  expect(res.response.status, text).toBe(200);
  return { text, read: readNacha(text) };
}

async function files(org: Org, query: { type?: 'payroll' | 'redebit' | 'reversal'; payroll_id?: string } = {}) {
  const res = await org.api.GET('/v1/disbursement-files', { params: { query } });
  expect(res.response.status, asReceived(res.response).text).toBe(200);
  return res.data!.data.files;
}

/** What the bank sends back, built by the tests' own writer, posted as it is. */
async function bankReturns(org: Org, returns: BankReturn[]): Promise<Outcome[]> {
  const file = bankReturnFile(
    { odfiRouting: org.odfi, rdfiRouting: RDFI, companyName: 'MONEY BACK', companyIdentification: org.companyId },
    { returns },
  );
  const res = await org.api.POST('/v1/disbursement-returns', {
    body: file,
    bodySerializer: (text: unknown) => text as string,
    headers: { 'Content-Type': 'text/plain' },
  });
  expect(res.response.status, asReceived(res.response).text).toBe(200);
  return res.data!.data.outcomes;
}

/** The return of the run's funding debit (an offset debit or re-debit: a returned debit comes back as 26). */
function fundingReturn(trace: string, amount: number, code = 'R01'): BankReturn {
  return {
    originalTrace: trace,
    code,
    amountCents: Math.round(amount * 100),
    routing: FUNDING.routing_number,
    account: FUNDING.account_number,
    originalDebit: true,
  };
}

beforeAll(async () => {
  stack = await startLocalStack();
});

afterAll(async () => {
  await stack?.stop();
});

describe('every file the service writes is a resource', () => {
  it("lists a run's file with its totals, and serves it as the run's own file", async () => {
    const org = await newOrg('Files Co');
    const a = await hire(org);
    const { run: done } = await paid(org, [a.id]);
    const listed = await files(org);
    expect(listed).toHaveLength(1);
    const file = listed[0]!;
    expect(file).toMatchObject({
      file_id: done.disbursement!.file_id,
      type: 'payroll',
      payroll_id: done.payroll_id,
      status: 'ready',
      effective_entry_date: done.effective_entry_date,
      release_by: done.release_by,
      total_credit: done.disbursement!.total_credit,
      total_debit: done.disbursement!.total_debit,
      entry_count: done.disbursement!.entry_count,
      file_id_modifier: done.disbursement!.file_id_modifier,
    });
    const { text } = await fileText(org, file.file_id);
    const same = await org.api.GET('/v1/payroll/{id}/disbursement', { ...at(done.payroll_id), parseAs: 'text' });
    expect(asReceived(same.response).text).toBe(text);
    const json = await org.api.GET('/v1/disbursement-files/{id}', {
      ...at(file.file_id),
      headers: { Accept: 'application/json' },
    });
    expect(json.data!.data).toEqual(file);
    expect((await files(org, { type: 'reversal' })).length).toBe(0);
    expect((await files(org, { payroll_id: done.payroll_id })).length).toBe(1);
    const unknown = await org.api.GET('/v1/disbursement-files/{id}', at('file_01kfz8k2d4f6h8k0m2p4r6t8vw'));
    expect(unknown.response.status).toBe(404);
    // The creation-date range (UTC) bounds the list by the files' time-ordered ids.
    const created = file.created_at.slice(0, 10);
    const dayBefore = new Date(Date.parse(created) - DAY).toISOString().slice(0, 10);
    const inRange = await org.api.GET('/v1/disbursement-files', { params: { query: { from: created, to: created } } });
    expect(inRange.data!.data.files.map((f) => f.file_id)).toEqual([file.file_id]);
    const before = await org.api.GET('/v1/disbursement-files', { params: { query: { to: dayBefore } } });
    expect(before.data!.data.files).toEqual([]);
    const after = await org.api.GET('/v1/disbursement-files', {
      params: { query: { from: new Date(Date.parse(created) + DAY).toISOString().slice(0, 10) } },
    });
    expect(after.data!.data.files).toEqual([]);

    // A sandbox cancel of the completed run withdraws its listed file: it must never reach a bank.
    expect((await org.api.POST('/v1/payroll/{id}/cancel', at(done.payroll_id))).response.status).toBe(200);
    const withdrawn = await org.api.GET('/v1/disbursement-files/{id}', {
      ...at(file.file_id),
      headers: { Accept: 'application/json' },
    });
    expect(withdrawn.data!.data.status).toBe('withdrawn');
    const gone = await org.api.GET('/v1/disbursement-files/{id}', { ...at(file.file_id), parseAs: 'text' });
    expect(gone.response.status).toBe(410);

    const reversed = await org.api.GET('/v1/disbursement-files', {
      params: { query: { from: '2026-12-02', to: '2026-12-01' } },
    });
    expect(reversed.response.status).toBe(400);
  });

  it("another organization's file is not found, and a token without read:disbursements gets its totals only", async () => {
    const org = await newOrg('Files Owner');
    const other = await newOrg('Files Other');
    const a = await hire(org);
    const { run: done } = await paid(org, [a.id]);
    const fileId = done.disbursement!.file_id!;
    expect((await other.api.GET('/v1/disbursement-files/{id}', at(fileId))).response.status).toBe(404);
    expect(await files(other)).toEqual([]);
    const key = await org.api.POST('/v1/api-keys', { body: { name: 'submitter', type: 'payroll-submitter' } });
    const submitter = typedClient(stack, key.data!.data.token);
    const text = await submitter.GET('/v1/disbursement-files/{id}', { ...at(fileId), parseAs: 'text' });
    expect(text.response.status).toBe(403);
    const totals = await submitter.GET('/v1/disbursement-files/{id}', {
      ...at(fileId),
      headers: { Accept: 'application/json' },
    });
    expect(totals.response.status).toBe(200);
    expect(totals.data!.data.file_id).toBe(fileId);
    // Money back is the admin's: a payroll submitter can neither reverse nor re-debit.
    const reverse = await submitter.POST('/v1/payroll/{id}/reversals', {
      ...at(done.payroll_id),
      body: { reason: 'duplicate', paystub_ids: [(await stubOf(org, done.payroll_id, a.id)).paystub_id] },
    });
    expect(reverse.response.status).toBe(403);
    expect((await submitter.POST('/v1/payroll/{id}/funding/redebit', at(done.payroll_id))).response.status).toBe(403);
  });
});

describe('a returned funding debit', () => {
  it('holds the organization, is re-debited, returned again, resolved by wire, and the next run is accepted', async () => {
    const org = await newOrg('Funding Returns Co');
    const a = await hire(org);
    const b = await hire(org);
    const { run: first } = await paid(org, [a.id, b.id]);
    const funding = first.funding!;
    expect(funding).toMatchObject({ status: 'scheduled', amount: first.totals.net_pay, redebits: [] });
    const payrollFile = await fileText(org, first.disbursement!.file_id!);
    const offset = payrollFile.read.batches[0]!.entries.at(-1)!;
    expect(offset).toMatchObject({
      transactionCode: 27,
      traceNumber: funding.trace_number,
      account: FUNDING.account_number,
    });

    // The bank returns the debit R01: the organization is on hold; the employees' credits are untouched.
    const outcomes = await bankReturns(org, [fundingReturn(funding.trace_number, funding.amount)]);
    expect(outcomes).toEqual<Outcome[]>([
      {
        trace_number: funding.trace_number,
        type: 'return',
        code: 'R01',
        outcome: 'applied',
        entry: 'funding_debit',
        payroll_id: first.payroll_id,
      },
    ]);
    const returned = await run(org, first.payroll_id);
    expect(returned.funding).toMatchObject({
      status: 'returned',
      return: { code: 'R01', reason: 'Insufficient funds' },
    });
    expect(returned.returns).toEqual({ count: 0, amount: 0 });
    expect((await stubOf(org, first.payroll_id, a.id)).payment.status).toBe('scheduled');
    const settings = (await org.api.GET('/v1/settings')).data!.data;
    expect(settings.funding_hold).toMatchObject({ payroll_id: first.payroll_id, code: 'R01' });
    const events = (await org.api.GET('/v1/events', { params: { query: { type: 'payroll.funding_returned' } } })).data!
      .data.events;
    expect(events.map((e) => e.payroll_id)).toEqual([first.payroll_id]);
    // The same report again changes nothing.
    expect((await bankReturns(org, [fundingReturn(funding.trace_number, funding.amount)]))[0]!.outcome).toBe(
      'already_applied',
    );

    // While held: new runs (and dry runs) are refused.
    const held = await submit(org, [a.id]);
    expect(held.response.status).toBe(422);
    expect((held.error as { error: { code: string } }).error.code).toBe('funding_hold');

    // Re-debit: one CCD batch, one debit to the same account for the same amount, RETRY PYMT, a new trace.
    const redebit = await org.api.POST('/v1/payroll/{id}/funding/redebit', at(first.payroll_id));
    expect(redebit.response.status, asReceived(redebit.response).text).toBe(200);
    const afterRedebit = redebit.data!.data.funding;
    expect(afterRedebit.status).toBe('redebit_scheduled');
    expect(afterRedebit.redebits).toHaveLength(1);
    expect((await org.api.GET('/v1/settings')).data!.data.funding_hold).toBeNull();
    const redebitFiles = await files(org, { type: 'redebit' });
    expect(redebitFiles).toHaveLength(1);
    expect(redebitFiles[0]!).toMatchObject({
      payroll_id: first.payroll_id,
      total_debit: funding.amount,
      total_credit: 0,
    });
    const redebitFile = await fileText(org, redebitFiles[0]!.file_id);
    const batch = redebitFile.read.batches[0]!;
    expect(redebitFile.read.batches).toHaveLength(1);
    expect(batch).toMatchObject({ sec: 'CCD', description: 'RETRY PYMT', companyId: org.companyId, serviceClass: 225 });
    expect(batch.entries).toHaveLength(1);
    expect(batch.entries[0]).toMatchObject({
      transactionCode: 27,
      routing: FUNDING.routing_number,
      account: FUNDING.account_number,
      amountCents: Math.round(funding.amount * 100),
      traceNumber: afterRedebit.redebits[0]!.trace_number,
    });
    assertTracesAcrossFiles([payrollFile.read, redebitFile.read]);
    assertDistinctModifiers([payrollFile.read, redebitFile.read]);

    // The re-debit is returned R01 too: the hold is back.
    const again = await bankReturns(org, [fundingReturn(afterRedebit.redebits[0]!.trace_number, funding.amount)]);
    expect(again[0]).toMatchObject({ outcome: 'applied', entry: 'funding_debit' });
    const returnedAgain = await run(org, first.payroll_id);
    expect(returnedAgain.funding!.status).toBe('returned');
    expect(returnedAgain.funding!.redebits[0]!.return).toMatchObject({ code: 'R01' });
    expect((await submit(org, [a.id])).response.status).toBe(422);

    // Paid by wire: the hold is lifted and the next run is accepted.
    const resolved = await org.api.POST('/v1/payroll/{id}/funding/resolve', {
      ...at(first.payroll_id),
      body: { method: 'wire', reference: 'FED20261128-0001' },
    });
    expect(resolved.response.status, asReceived(resolved.response).text).toBe(200);
    expect(resolved.data!.data.funding).toMatchObject({
      status: 'resolved',
      resolution: { method: 'wire', reference: 'FED20261128-0001' },
    });
    expect((await org.api.GET('/v1/settings')).data!.data.funding_hold).toBeNull();
    const next = await submit(org, [a.id]);
    expect(next.response.status, asReceived(next.response).text).toBe(202);
    // Nothing left to re-debit or resolve.
    const late = await org.api.POST('/v1/payroll/{id}/funding/redebit', at(first.payroll_id));
    expect(late.response.status).toBe(422);
    expect(
      (
        await org.api.POST('/v1/payroll/{id}/funding/resolve', {
          ...at(first.payroll_id),
          body: { method: 'other', reference: 'x' },
        })
      ).response.status,
    ).toBe(409);
  });

  it('blocks a run awaiting approval: a funding_hold blocker, and approving it answers 422 funding_hold', async () => {
    const org = await newOrg('Funding Hold Approval Co');
    const a = await hire(org);
    const { run: first } = await paid(org, [a.id]);
    const approverKey = await org.api.POST('/v1/api-keys', { body: { name: 'approver', type: 'admin' } });
    const approver = typedClient(stack, approverKey.data!.data.token);
    await org.api.PATCH('/v1/settings', { body: { payroll_approval: 'required' } });
    const waiting = await submit(org, [a.id], 20);
    expect(waiting.response.status, asReceived(waiting.response).text).toBe(202);
    const waitingId = (waiting.data!.data as { payroll_id: string }).payroll_id;
    await bankReturns(org, [fundingReturn(first.funding!.trace_number, first.funding!.amount)]);
    const blocked = await run(org, waitingId);
    expect(blocked.blockers).toEqual([expect.objectContaining({ code: 'funding_hold', payroll_id: first.payroll_id })]);
    const approve = await approver.POST('/v1/payroll/{id}/approve', at(waitingId));
    expect(approve.response.status).toBe(422);
    expect(approve.error!.error.code).toBe('funding_hold');
    await org.api.POST('/v1/payroll/{id}/funding/resolve', {
      ...at(first.payroll_id),
      body: { method: 'other', reference: 'ACH credit 2026-11-28' },
    });
    expect((await approver.POST('/v1/payroll/{id}/approve', at(waitingId))).response.status).toBe(200);
  });

  it('re-debits R01 and R09 only, at most twice; a credits-only run has no debit; a wrong amount is not applied', async () => {
    const org = await newOrg('Redebit Rules Co');
    const a = await hire(org);
    const { run: closed } = await paid(org, [a.id]);
    // The JSON form of a report matches the offset debit's trace as the bank's file does.
    const r03 = await org.api.POST('/v1/disbursement-returns', {
      body: { returns: [{ trace_number: closed.funding!.trace_number, code: 'R03' }], corrections: [] },
    });
    expect(r03.data!.data.outcomes[0]).toMatchObject({ outcome: 'applied', entry: 'funding_debit' });
    const refused = await org.api.POST('/v1/payroll/{id}/funding/redebit', at(closed.payroll_id));
    expect(refused.response.status).toBe(422);
    expect(refused.error!.error).toMatchObject({ code: 'redebit_not_allowed', details: [{ reason: 'return_code' }] });
    await org.api.POST('/v1/payroll/{id}/funding/resolve', {
      ...at(closed.payroll_id),
      body: { method: 'wire', reference: 'W1' },
    });

    const { run: broke } = await paid(org, [a.id]);
    const wrong = await bankReturns(org, [fundingReturn(broke.funding!.trace_number, broke.funding!.amount + 1)]);
    expect(wrong[0]!.outcome).toBe('amount_mismatch');
    let trace = broke.funding!.trace_number;
    for (let attempt = 0; attempt < 2; attempt++) {
      expect((await bankReturns(org, [fundingReturn(trace, broke.funding!.amount, 'R09')]))[0]!.outcome).toBe(
        'applied',
      );
      const redebit = await org.api.POST('/v1/payroll/{id}/funding/redebit', at(broke.payroll_id));
      expect(redebit.response.status, asReceived(redebit.response).text).toBe(200);
      trace = redebit.data!.data.funding.redebits.at(-1)!.trace_number;
    }
    expect((await bankReturns(org, [fundingReturn(trace, broke.funding!.amount)]))[0]!.outcome).toBe('applied');
    const third = await org.api.POST('/v1/payroll/{id}/funding/redebit', at(broke.payroll_id));
    expect(third.error!.error).toMatchObject({ code: 'redebit_not_allowed', details: [{ reason: 'limit_reached' }] });

    const unfunded = await newOrg('Credits Only Co', false);
    const c = await hire(unfunded);
    const { run: creditsOnly } = await paid(unfunded, [c.id]);
    expect(creditsOnly.funding).toBeNull();
    const none = await unfunded.api.POST('/v1/payroll/{id}/funding/redebit', at(creditsOnly.payroll_id));
    expect(none.error!.error).toMatchObject({ code: 'redebit_not_allowed', details: [{ reason: 'no_funding_debit' }] });
  });
});

describe('reversals', () => {
  it('reverses two payments: a REVERSAL file of debits equal to the deposits, balanced; paystubs voided, out of year-to-date; a return of one reversal debit recorded', async () => {
    const org = await newOrg('Reversals Co');
    const [a, b, c] = [await hire(org), await hire(org), await hire(org)];
    const { run: done, stubs } = await paid(org, [a.id, b.id, c.id]);
    const payrollFile = await fileText(org, done.disbursement!.file_id!);
    const credits = new Map(payrollFile.read.batches[0]!.entries.map((e) => [e.traceNumber, e]));
    const [stubA, stubB] = [stubs.get(a.id)!, stubs.get(b.id)!];
    const key = `reverse-${done.payroll_id}`;
    const body = { reason: 'duplicate' as const, paystub_ids: [stubB.paystub_id, stubA.paystub_id] };
    const res = await org.api.POST('/v1/payroll/{id}/reversals', {
      ...at(done.payroll_id),
      body,
      headers: { 'Idempotency-Key': key },
    });
    expect(res.response.status, asReceived(res.response).text).toBe(201);
    const reversal = res.data!.data;
    expect(res.response.headers.get('location')).toBe(`/v1/disbursement-files/${reversal.file.file_id}`);
    expect(reversal.file).toMatchObject({ type: 'reversal', reason: 'duplicate', payroll_id: done.payroll_id });
    const total = Math.round((stubA.net_pay + stubB.net_pay) * 100);

    // The file: the run's company, REVERSAL, a debit (27) per payment equal to its deposit, an offset credit.
    const { read } = await fileText(org, reversal.file.file_id);
    const batch = read.batches[0]!;
    expect(batch).toMatchObject({ description: 'REVERSAL', companyId: org.companyId, serviceClass: 200, sec: 'PPD' });
    const debits = batch.entries.filter((e) => e.transactionCode === 27);
    expect(debits).toHaveLength(2);
    for (const stub of [stubA, stubB]) {
      const original = credits.get(stub.payment.trace_number!)!;
      const payment = reversal.payments.find((p) => p.paystub_id === stub.paystub_id)!;
      const debit = debits.find((d) => d.traceNumber === payment.reversal_trace_number)!;
      expect(debit).toMatchObject({
        routing: original.routing,
        account: original.account,
        amountCents: original.amountCents,
        individualId: original.individualId,
        individualName: original.individualName,
      });
    }
    const offset = batch.entries.filter((e) => e.transactionCode === 22);
    expect(offset).toEqual([expect.objectContaining({ account: FUNDING.account_number, amountCents: total })]);
    expect(batch.control.totalDebitCents).toBe(total);
    expect(batch.control.totalCreditCents).toBe(total);
    assertTracesAcrossFiles([payrollFile.read, read]);
    // The deposits settle in ten days: the reversal debits never settle before them.
    expect(batch.effectiveEntryDate).toBe(done.effective_entry_date);
    expect(reversal.file.effective_entry_date).toBe(done.effective_entry_date);

    // The same key and body: the same answer, no second file. Another body under the key: refused.
    const replay = await org.api.POST('/v1/payroll/{id}/reversals', {
      ...at(done.payroll_id),
      body,
      headers: { 'Idempotency-Key': key },
    });
    expect(replay.response.status).toBe(201);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.data!.data.file.file_id).toBe(reversal.file.file_id);
    const reused = await org.api.POST('/v1/payroll/{id}/reversals', {
      ...at(done.payroll_id),
      body: { reason: 'incorrect_amount', paystub_ids: [stubA.paystub_id] },
      headers: { 'Idempotency-Key': key },
    });
    expect(reused.response.status).toBe(422);
    // The key is the organization's, not the run's: sent for another run, it is a key reused, not a new request.
    const elsewhere = await org.api.POST('/v1/payroll/{id}/reversals', {
      ...at('pay_00000000000000000000000000'),
      body,
      headers: { 'Idempotency-Key': key },
    });
    expect(elsewhere.response.status).toBe(422);
    expect(elsewhere.error!.error.code).toBe('idempotency_key_reused');
    expect((await files(org, { type: 'reversal' })).length).toBe(1);

    // Payments, paystubs, the run, events.
    const reversedA = await stubOf(org, done.payroll_id, a.id);
    expect(reversedA.status).toBe('voided');
    expect(reversedA.payment).toMatchObject({ status: 'reversal_scheduled', reversal: { reason: 'duplicate' } });
    expect((await stubOf(org, done.payroll_id, c.id)).payment.status).toBe('scheduled');
    expect((await run(org, done.payroll_id)).reversals).toEqual({ count: 2, amount: total / 100 });
    const reversedEvents = (await org.api.GET('/v1/events', { params: { query: { type: 'payment.reversed' } } })).data!
      .data.events;
    expect(reversedEvents).toHaveLength(2);

    // Year-to-date of a later paystub leaves the voided one out.
    const { stubs: later } = await paid(org, [a.id], 12, 1000);
    expect(later.get(a.id)!.year_to_date.gross_pay).toBe(1000);

    // Once per payment.
    const twice = await org.api.POST('/v1/payroll/{id}/reversals', {
      ...at(done.payroll_id),
      body: { reason: 'duplicate', paystub_ids: [stubA.paystub_id] },
    });
    expect(twice.response.status).toBe(409);
    expect(twice.error!.error.code).toBe('already_reversed');

    // A run with reversals is not cancelled (its reversal file would stay live without the deposits it takes back).
    const cancel = await org.api.POST('/v1/payroll/{id}/cancel', at(done.payroll_id));
    expect(cancel.response.status).toBe(409);

    // The bank returns B's original deposit after all (the account is closed): recorded beside the reversal.
    const returnedB = await bankReturns(org, [
      {
        originalTrace: stubB.payment.trace_number!,
        code: 'R03',
        amountCents: Math.round(stubB.net_pay * 100),
        routing: RDFI,
        account: b.account,
      },
    ]);
    expect(returnedB[0]).toMatchObject({ outcome: 'applied', paystub_id: stubB.paystub_id });
    const afterB = await stubOf(org, done.payroll_id, b.id);
    expect(afterB.payment).toMatchObject({ status: 'reversal_scheduled', return: { code: 'R03' } });
    expect((await org.api.GET('/v1/employees/{id}', at(b.id))).data!.data.bank_account!.status).toBe('invalid');

    // A returned deposit is never reversed.
    const stubC = stubs.get(c.id)!;
    const returnedC = await bankReturns(org, [
      {
        originalTrace: stubC.payment.trace_number!,
        code: 'R01',
        amountCents: Math.round(stubC.net_pay * 100),
        routing: RDFI,
        account: c.account,
      },
    ]);
    expect(returnedC[0]!.outcome).toBe('applied');
    const afterReturn = await org.api.POST('/v1/payroll/{id}/reversals', {
      ...at(done.payroll_id),
      body: { reason: 'incorrect_account', paystub_ids: [stubC.paystub_id] },
    });
    expect(afterReturn.response.status).toBe(409);
    expect(afterReturn.error!.error.code).toBe('payment_returned');

    // The bank returns one reversal debit (the employee's account had no funds): recorded, once.
    const paymentA = reversal.payments.find((p) => p.paystub_id === stubA.paystub_id)!;
    const reversalReturn: BankReturn = {
      originalTrace: paymentA.reversal_trace_number,
      code: 'R01',
      amountCents: Math.round(stubA.net_pay * 100),
      routing: RDFI,
      account: a.account,
      originalDebit: true,
    };
    const outcome = await bankReturns(org, [reversalReturn]);
    expect(outcome[0]).toMatchObject({ outcome: 'applied', entry: 'reversal_debit', paystub_id: stubA.paystub_id });
    expect((await bankReturns(org, [reversalReturn]))[0]!.outcome).toBe('already_applied');
    const bounced = await stubOf(org, done.payroll_id, a.id);
    expect(bounced.payment.status).toBe('reversal_returned');
    expect(bounced.payment.reversal!.return).toMatchObject({ code: 'R01' });
    const bouncedEvents = (
      await org.api.GET('/v1/events', { params: { query: { type: 'payment.reversal_returned' } } })
    ).data!.data.events;
    expect(bouncedEvents).toHaveLength(1);
  });

  it('concurrent reversals of the same payment write exactly one file entry', async () => {
    const org = await newOrg('Reversal Race Co');
    const a = await hire(org);
    const { run: done, stubs } = await paid(org, [a.id]);
    const stub = stubs.get(a.id)!;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        org.api.POST('/v1/payroll/{id}/reversals', {
          ...at(done.payroll_id),
          body: { reason: 'duplicate', paystub_ids: [stub.paystub_id] },
        }),
      ),
    );
    const statuses = answers.map((r) => r.response.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    const reversals = await files(org, { type: 'reversal' });
    expect(reversals).toHaveLength(1);
    const { read } = await fileText(org, reversals[0]!.file_id);
    expect(read.batches[0]!.entries.filter((e) => e.transactionCode === 27)).toHaveLength(1);
  });

  it('refuses a reversal past the fifth banking day, of a paystub not in the run, and without an admin key', async () => {
    const org = await newOrg('Reversal Window Co');
    const a = await hire(org);
    const { run: old, stubs } = await paid(org, [a.id], -30);
    const closed = await org.api.POST('/v1/payroll/{id}/reversals', {
      ...at(old.payroll_id),
      body: { reason: 'incorrect_amount', paystub_ids: [stubs.get(a.id)!.paystub_id] },
    });
    expect(closed.response.status).toBe(422);
    expect(closed.error!.error.code).toBe('reversal_window_closed');
    const { run: recent } = await paid(org, [a.id]);
    const foreign = await org.api.POST('/v1/payroll/{id}/reversals', {
      ...at(recent.payroll_id),
      body: { reason: 'duplicate', paystub_ids: [stubs.get(a.id)!.paystub_id] },
    });
    expect(foreign.response.status).toBe(422);
    expect(foreign.error!.error.code).toBe('paystub_not_found');
    const empty = await org.api.POST('/v1/payroll/{id}/reversals', {
      ...at(recent.payroll_id),
      body: { reason: 'duplicate', paystub_ids: [] },
    });
    expect(empty.response.status).toBe(400);
  });
});
