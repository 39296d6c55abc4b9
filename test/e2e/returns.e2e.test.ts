import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { Webhook } from 'standardwebhooks';
import { localS3Client } from '../../local/engines/provision.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type BankCorrection, type BankReturn, bankReturnFile, corruptLine } from '../support/bank-return-file.js';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { readNacha } from '../support/nacha-check.js';
import { asReceived, typedClient, type components, type TypedClient } from '../support/typed-client.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * What the bank sends back, over HTTPS: a return / notification-of-change file built the way a bank builds one
 * (with the tests' own writer, test/support/bank-return-file.ts, not the service's), posted as it is, and every
 * effect checked through the API: the payment, the run's `returns`, the employee's account, the events and their
 * webhooks, the next payroll and its file. Also: the same file twice at once, a file with one bad line, the JSON
 * form, and the sandbox's returned deposit.
 */

type Paystub = components['schemas']['Paystub'];
type Outcome = components['schemas']['BankReportOutcome'];

interface Org {
  api: TypedClient;
  token: string;
  odfi: string;
  companyId: string;
}

const at = (id: string) => ({ params: { path: { id } } });
const RDFI = '011000015';
let stack: RunningStack;
let seq = 0;

async function newOrg(name: string): Promise<Org> {
  const { token } = await stack.createOrganization(name);
  const api = typedClient(stack, token);
  const settings = (await api.GET('/v1/settings')).data!.data;
  return {
    api,
    token,
    odfi: settings.originator.immediate_destination.trim(),
    companyId: settings.originator.company_identification,
  };
}

async function hire(org: Org, account = String(70_000_000 + seq)): Promise<{ id: string; account: string }> {
  const n = seq++;
  const res = await org.api.POST('/v1/employees', {
    body: {
      first_name: 'Ret',
      last_name: `Urn ${n}`,
      email: `returns${n}@example.com`,
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

let period = 0;
/** Runs a payroll for `ids` to completion; each call its own pay period. Returns the run id and its paystubs. */
async function paid(org: Org, ids: string[]): Promise<{ payrollId: string; stubs: Map<string, Paystub> }> {
  const start = new Date(Date.UTC(2024, 0, 1) + 14 * 86_400_000 * period++);
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  const end = new Date(start.getTime() + 13 * 86_400_000);
  const res = await org.api.POST('/v1/payroll', {
    body: {
      pay_period_start: iso(start),
      pay_period_end: iso(end),
      pay_date: iso(new Date(end.getTime() + 5 * 86_400_000)),
      employees: ids.map((id, i) => ({ employee_id: id, gross_pay: 1500 + i * 10, hours_worked: 80 })),
    },
  });
  expect(res.response.status, asReceived(res.response).text).toBe(202);
  const payrollId = (res.data!.data as { payroll_id: string }).payroll_id;
  const done = await vi.waitFor(
    async () => {
      const run = (await org.api.GET('/v1/payroll/{id}', at(payrollId))).data!.data;
      if (!['completed', 'rejected', 'failed', 'cancelled'].includes(run.status)) throw new Error(run.status);
      return run;
    },
    { timeout: 20_000, interval: 50 },
  );
  expect(done.status).toBe('completed');
  const stubs = new Map<string, Paystub>();
  for (const id of ids) stubs.set(id, await stubOf(org, payrollId, id));
  return { payrollId, stubs };
}

async function stubOf(org: Org, payrollId: string, employeeId: string): Promise<Paystub> {
  const list = await org.api.GET('/v1/paystubs', {
    params: { query: { payroll_id: payrollId, employee_id: employeeId } },
  });
  const item = list.data!.data.paystubs[0]!;
  return (await org.api.GET('/v1/paystubs/{id}', at(item.paystub_id))).data!.data;
}

function returnOf(stub: Paystub, code: string, account: string): BankReturn {
  return {
    originalTrace: stub.payment.trace_number!,
    code,
    amountCents: Math.round(stub.net_pay * 100),
    routing: stub.payment.routing_number,
    account,
    individualId: stub.employee_id.slice(-15),
  };
}

function fileFor(org: Org, items: { returns?: BankReturn[]; corrections?: BankCorrection[] }) {
  return bankReturnFile(
    { odfiRouting: org.odfi, rdfiRouting: RDFI, companyName: 'RETURNS E2E', companyIdentification: org.companyId },
    items,
  );
}

/** POST the bank's file as it is: `Content-Type: text/plain`. */
async function postFile(org: Org, file: string) {
  const res = await org.api.POST('/v1/disbursement-returns', {
    body: file,
    bodySerializer: (text: unknown) => text as string,
    headers: { 'Content-Type': 'text/plain' },
  });
  return { status: res.response.status, data: res.data?.data, error: res.error, text: asReceived(res.response).text };
}

async function eventsOf(org: Org, type: 'payment.returned' | 'employee.bank_account_corrected') {
  return (await org.api.GET('/v1/events', { params: { query: { type, limit: 100 } } })).data!.data.events;
}

beforeAll(async () => {
  stack = await startLocalStack();
});

afterAll(async () => {
  await stack?.stop();
});

describe('a bank return / notification-of-change file', () => {
  it('applies returns and corrections: payments, the run, the employees, events and webhooks, and the next payroll', async () => {
    const org = await newOrg('Returns E2E');
    const receiver = await startReceiver();
    const hook = (
      await org.api.POST('/v1/webhooks', {
        body: { url: receiver.url, events: ['payment.returned', 'employee.bank_account_corrected'] },
      })
    ).data!.data;
    const closed = await hire(org); // R03: the account does not exist
    const broke = await hire(org); // R01: insufficient funds does not make the account unusable
    const moved = await hire(org); // C01: the bank says the account number is another
    const fine = await hire(org);
    const run = await paid(org, [closed.id, broke.id, moved.id, fine.id]);
    const stub = (id: string) => run.stubs.get(id)!;
    const ytdBefore = stub(closed.id).year_to_date;
    const file = fileFor(org, {
      returns: [returnOf(stub(closed.id), 'R03', closed.account), returnOf(stub(broke.id), 'R01', broke.account)],
      corrections: [
        {
          originalTrace: stub(moved.id).payment.trace_number!,
          code: 'C01',
          routing: RDFI,
          account: moved.account,
          individualId: moved.id.slice(-15),
          corrected: { account: '987654321' },
        },
        {
          // Not a deposit of this organization (another ODFI's sequence).
          originalTrace: '091000010000001',
          code: 'C02',
          routing: RDFI,
          account: fine.account,
          corrected: { routing: '021000021' },
        },
      ],
    });

    const posted = await postFile(org, file);
    expect(posted.status, posted.text).toBe(200);
    expect(posted.data!.outcomes).toEqual<Outcome[]>([
      {
        trace_number: stub(closed.id).payment.trace_number!,
        type: 'return',
        code: 'R03',
        outcome: 'applied',
        paystub_id: stub(closed.id).paystub_id,
      },
      {
        trace_number: stub(broke.id).payment.trace_number!,
        type: 'return',
        code: 'R01',
        outcome: 'applied',
        paystub_id: stub(broke.id).paystub_id,
      },
      {
        trace_number: stub(moved.id).payment.trace_number!,
        type: 'correction',
        code: 'C01',
        outcome: 'applied',
        paystub_id: stub(moved.id).paystub_id,
        account_updated: true,
      },
      { trace_number: '091000010000001', type: 'correction', code: 'C02', outcome: 'unknown_trace' },
    ]);

    // The payments: returned with the code and its standard reason; the paystubs stay issued, YTD unchanged.
    const returned = await stubOf(org, run.payrollId, closed.id);
    expect(returned.status).toBe('issued');
    expect(returned.payment).toMatchObject({
      status: 'returned',
      trace_number: stub(closed.id).payment.trace_number,
      effective_entry_date: stub(closed.id).payment.effective_entry_date,
      return: { code: 'R03', reason: 'No account / unable to locate account' },
    });
    expect(Date.parse(returned.payment.return!.returned_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(returned.year_to_date).toEqual(ytdBefore);
    expect((await stubOf(org, run.payrollId, broke.id)).payment.return).toMatchObject({
      code: 'R01',
      reason: 'Insufficient funds',
    });
    const untouched = await stubOf(org, run.payrollId, fine.id);
    expect(untouched.payment.status).toBe('scheduled');
    expect(untouched.payment.return).toBeUndefined();

    // The run counts its returns.
    const payroll = (await org.api.GET('/v1/payroll/{id}', at(run.payrollId))).data!.data;
    expect(payroll.status).toBe('completed');
    expect(payroll.returns).toEqual({ count: 2, amount: stub(closed.id).net_pay + stub(broke.id).net_pay });

    // The employees: R03 makes the account invalid, R01 does not; C01 corrects the account number.
    const employee = async (id: string) => (await org.api.GET('/v1/employees/{id}', at(id))).data!.data;
    expect((await employee(closed.id)).bank_account).toMatchObject({
      status: 'invalid',
      status_reason: expect.stringContaining('R03'),
    });
    expect((await employee(broke.id)).bank_account!.status).toBe('active');
    const corrected = (await employee(moved.id)).bank_account!;
    expect(corrected).toMatchObject({ account_number_last4: '4321', status: 'active', routing_number: RDFI });
    expect(Date.parse(corrected.corrected_at!)).toBeGreaterThan(Date.now() - 60_000);
    expect((await employee(fine.id)).bank_account!.corrected_at).toBeNull();

    // The events, and their webhooks, signed; the correction carries masked data only.
    const returnedEvents = await eventsOf(org, 'payment.returned');
    const returnedData = returnedEvents.map((e) => e.data as Record<string, unknown>);
    expect(returnedData.sort((a, b) => String(a.code).localeCompare(String(b.code)))).toEqual([
      expect.objectContaining({
        code: 'R01',
        employee_id: broke.id,
        paystub_id: stub(broke.id).paystub_id,
        payroll_id: run.payrollId,
        amount: stub(broke.id).net_pay,
      }),
      expect.objectContaining({
        code: 'R03',
        employee_id: closed.id,
        paystub_id: stub(closed.id).paystub_id,
        payroll_id: run.payrollId,
        amount: stub(closed.id).net_pay,
      }),
    ]);
    const correctedEvents = await eventsOf(org, 'employee.bank_account_corrected');
    expect(correctedEvents).toHaveLength(1);
    expect(correctedEvents[0]!.data).toMatchObject({
      employee_id: moved.id,
      code: 'C01',
      bank_account: { account_number_last4: '4321', routing_number: RDFI, account_type: 'checking' },
    });
    const delivered = await receiver.waitFor((all) => all.length >= 3);
    const verifier = new Webhook(hook.secret);
    const types = delivered.map(
      (r) => (verifier.verify(r.body, r.headers as Record<string, string>) as { type: string }).type,
    );
    expect(types.sort()).toEqual(['employee.bank_account_corrected', 'payment.returned', 'payment.returned']);
    for (const r of delivered) expect(r.body).not.toContain('987654321');
    await receiver.close();

    // The next payroll refuses the invalid account until it is replaced, and pays the corrected account.
    const refused = await org.api.POST('/v1/payroll', {
      body: {
        pay_period_start: '2025-06-01',
        pay_period_end: '2025-06-14',
        pay_date: '2025-06-20',
        employees: [{ employee_id: closed.id, gross_pay: 100, hours_worked: 8 }],
      },
    });
    expect(refused.response.status).toBe(422);
    expect(refused.error!.error.details).toEqual([
      expect.objectContaining({
        code: 'missing_bank_account',
        field: 'employees[0].employee_id',
        message: expect.stringContaining('R03'),
      }),
    ]);
    const replaced = await org.api.PATCH('/v1/employees/{id}', {
      ...at(closed.id),
      body: { bank_account: { account_number: '55443322', routing_number: RDFI, account_type: 'savings' } },
    });
    expect(replaced.data!.data.bank_account).toMatchObject({ status: 'active', status_reason: null });
    const next = await paid(org, [closed.id, moved.id]);
    const nacha = await org.api.GET('/v1/payroll/{id}/disbursement', { ...at(next.payrollId), parseAs: 'text' });
    const entries = readNacha(nacha.data!).batches.flatMap((b) => b.entries);
    const accountOf = (id: string) => entries.find((e) => e.individualId === id.slice(-15).toUpperCase())!.account;
    expect(accountOf(moved.id)).toBe('987654321');
    expect(accountOf(closed.id)).toBe('55443322');
  });

  it('applies each item once when the same file is posted twice at once, and again later', async () => {
    const org = await newOrg('Returns twice');
    const people = [await hire(org), await hire(org), await hire(org)];
    const run = await paid(
      org,
      people.map((p) => p.id),
    );
    const file = fileFor(org, {
      returns: people.map((p, i) => returnOf(run.stubs.get(p.id)!, ['R02', 'R16', 'R20'][i]!, p.account)),
    });
    const [a, b] = await Promise.all([postFile(org, file), postFile(org, file)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    // For each item: exactly one of the two requests applied it.
    for (let i = 0; i < people.length; i++) {
      expect([a.data!.outcomes[i]!.outcome, b.data!.outcomes[i]!.outcome].sort()).toEqual([
        'already_applied',
        'applied',
      ]);
    }
    const again = await postFile(org, file);
    expect(again.data!.outcomes.map((o) => o.outcome)).toEqual([
      'already_applied',
      'already_applied',
      'already_applied',
    ]);
    const payroll = (await org.api.GET('/v1/payroll/{id}', at(run.payrollId))).data!.data;
    expect(payroll.returns.count).toBe(3);
    expect(await eventsOf(org, 'payment.returned')).toHaveLength(3);
    expect((await stubOf(org, run.payrollId, people[1]!.id)).payment.return).toMatchObject({
      code: 'R16',
      reason: 'Account frozen / entry returned per OFAC instruction',
    });
  });

  it('refuses a file with one bad line, naming the line, and applies none of it', async () => {
    const org = await newOrg('Returns bad line');
    const people = [await hire(org), await hire(org)];
    const run = await paid(
      org,
      people.map((p) => p.id),
    );
    const file = fileFor(org, { returns: people.map((p) => returnOf(run.stubs.get(p.id)!, 'R03', p.account)) });
    // Line 6 is the second entry's addenda: an unknown reason code. The first return is well formed.
    const bad = corruptLine(file, 6, (line) => `${line.slice(0, 3)}R00${line.slice(6)}`);
    const refused = await postFile(org, bad);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.error!.error.details).toEqual([expect.objectContaining({ field: 'line 6' })]);
    expect(refused.text).toContain('Line 6');
    // Truncated: the file control record is missing.
    const truncated = file.split('\n').slice(0, 6).join('\n');
    const cut = await postFile(org, truncated);
    expect(cut.status).toBe(400);
    // A batch control whose entry hash does not add up.
    const hashLine = file.split('\n').findIndex((l) => l.startsWith('8')) + 1;
    const badHash = await postFile(
      org,
      corruptLine(file, hashLine, (l) => `${l.slice(0, 10)}9999999999${l.slice(20)}`),
    );
    expect(badHash.status).toBe(400);
    expect(badHash.text).toContain(`Line ${hashLine}`);
    for (const p of people) {
      const s = await stubOf(org, run.payrollId, p.id);
      expect(s.payment.status).toBe('scheduled');
      expect(s.payment.return).toBeUndefined();
    }
    expect(await eventsOf(org, 'payment.returned')).toEqual([]);
    expect((await org.api.GET('/v1/employees/{id}', at(people[0]!.id))).data!.data.bank_account!.status).toBe('active');
  });

  it('takes the JSON form, and refuses a malformed one naming the field', async () => {
    const org = await newOrg('Returns JSON');
    const person = await hire(org);
    const run = await paid(org, [person.id]);
    const trace = run.stubs.get(person.id)!.payment.trace_number!;
    const bad = await org.api.POST('/v1/disbursement-returns', {
      body: { returns: [{ trace_number: trace, code: 'R99' }], corrections: [] },
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error!.error.details[0]).toMatchObject({ field: 'returns[0].code' });
    const res = await org.api.POST('/v1/disbursement-returns', {
      body: { returns: [{ trace_number: trace, code: 'R29' }] },
    });
    expect(res.response.status, asReceived(res.response).text).toBe(200);
    expect(res.data!.data.outcomes).toEqual([
      {
        trace_number: trace,
        type: 'return',
        code: 'R29',
        outcome: 'applied',
        paystub_id: run.stubs.get(person.id)!.paystub_id,
      },
    ]);
    expect((await stubOf(org, run.payrollId, person.id)).payment.return!.reason).toBe(
      'Corporate customer advises not authorized',
    );
    // A correction in the JSON form, with the addenda's corrected data as the bank wrote it.
    const badData = await org.api.POST('/v1/disbursement-returns', {
      body: { corrections: [{ trace_number: trace, code: 'C05', corrected_data: '99' }] },
    });
    expect(badData.response.status).toBe(400);
    expect(badData.error!.error.details[0]).toMatchObject({ field: 'corrections[0].corrected_data' });
    const corrected = await org.api.POST('/v1/disbursement-returns', {
      body: { corrections: [{ trace_number: trace, code: 'C05', corrected_data: '32' }] },
    });
    expect(corrected.data!.data.outcomes).toEqual([
      expect.objectContaining({ type: 'correction', code: 'C05', outcome: 'applied', account_updated: true }),
    ]);
    const account = (await org.api.GET('/v1/employees/{id}', at(person.id))).data!.data.bank_account!;
    expect(account).toMatchObject({ account_type: 'savings', status: 'active' });
    // Another organization's trace numbers are unknown to this one.
    const other = await newOrg('Returns JSON other');
    const foreign = await other.api.POST('/v1/disbursement-returns', {
      body: { returns: [{ trace_number: trace, code: 'R01' }] },
    });
    expect(foreign.data!.data.outcomes[0]!.outcome).toBe('unknown_trace');
  });

  it('returns the sandbox deposit to account 000000000 after the run completes; the rest is untouched', async () => {
    const org = await newOrg('Returns sandbox');
    const bounce = await hire(org, '000000000');
    const fine = await hire(org);
    const receiver = await startReceiver();
    await org.api.POST('/v1/webhooks', { body: { url: receiver.url, events: ['payment.returned'] } });
    const run = await paid(org, [bounce.id, fine.id]);
    const [delivery] = await receiver.waitFor((all) => all.length >= 1);
    expect(JSON.parse(delivery!.body)).toMatchObject({
      type: 'payment.returned',
      data: { code: 'R03', employee_id: bounce.id, payroll_id: run.payrollId },
    });
    await receiver.close();
    expect((await stubOf(org, run.payrollId, bounce.id)).payment).toMatchObject({ status: 'returned' });
    expect((await stubOf(org, run.payrollId, fine.id)).payment.status).toBe('scheduled');
    const payroll = (await org.api.GET('/v1/payroll/{id}', at(run.payrollId))).data!.data;
    expect(payroll).toMatchObject({ status: 'completed', returns: { count: 1 } });
    expect((await org.api.GET('/v1/employees/{id}', at(bounce.id))).data!.data.bank_account!.status).toBe('invalid');
  });
});

/**
 * The security review of bank data (issue 31): what a payroll submitter's or a read-only token could do to pay, a
 * late return after a correction, broken files the reader used to apply, and request bodies read as written.
 */
describe('bank data guards', () => {
  async function tokenOf(org: Org, type: 'read-only' | 'payroll-submitter'): Promise<TypedClient> {
    const key = await org.api.POST('/v1/api-keys', { body: { name: `${type} key`, type } });
    return typedClient(stack, key.data!.data.token);
  }

  const c07 = (stub: Paystub, account: string, corrected: string): BankCorrection => ({
    originalTrace: stub.payment.trace_number!,
    code: 'C07',
    routing: RDFI,
    account,
    individualId: stub.employee_id.slice(-15),
    corrected: { routing: '021000021', account: corrected, accountType: 'checking' },
  });

  it('refuses the returns intake to a payroll submitter (a correction there redirected pay) and the NACHA text to all but admin', async () => {
    const org = await newOrg('Guards Scopes');
    const worker = await hire(org);
    const run = await paid(org, [worker.id]);
    const stub = run.stubs.get(worker.id)!;
    const submitter = await tokenOf(org, 'payroll-submitter');
    const reader = await tokenOf(org, 'read-only');
    const redirect = fileFor(org, { corrections: [c07(stub, worker.account, '666666666')] });
    const asSubmitter = await submitter.POST('/v1/disbursement-returns', {
      body: redirect,
      bodySerializer: (text: unknown) => text as string,
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(asSubmitter.response.status).toBe(403);
    expect(asSubmitter.error!.error.code).toBe('insufficient_scope');
    const json = await submitter.POST('/v1/disbursement-returns', {
      body: { returns: [{ trace_number: stub.payment.trace_number!, code: 'R03' }], corrections: [] },
    });
    expect(json.response.status).toBe(403);
    const account = (await org.api.GET('/v1/employees/{id}', at(worker.id))).data!.data.bank_account!;
    expect(account).toMatchObject({
      routing_number: RDFI,
      account_number_last4: worker.account.slice(-4),
      status: 'active',
    });

    for (const client of [submitter, reader]) {
      const text = await client.GET('/v1/payroll/{id}/disbursement', { ...at(run.payrollId), parseAs: 'text' });
      expect(text.response.status).toBe(403);
      expect(asReceived(text.response).text).not.toContain(worker.account);
      const totals = await client.GET('/v1/payroll/{id}/disbursement', {
        ...at(run.payrollId),
        headers: { Accept: 'application/json' },
      });
      expect(totals.response.status).toBe(200);
    }
    const file = await org.api.GET('/v1/payroll/{id}/disbursement', { ...at(run.payrollId), parseAs: 'text' });
    expect(file.response.status).toBe(200);
    const accounts = readNacha(file.data as unknown as string).batches.flatMap((b) => b.entries.map((e) => e.account));
    expect(accounts).toContain(worker.account);
  });

  it('leaves a corrected account alone when a late return of the old details arrives', async () => {
    const org = await newOrg('Guards Versions');
    const worker = await hire(org);
    const first = await paid(org, [worker.id]);
    const corrected = await postFile(
      org,
      fileFor(org, { corrections: [c07(first.stubs.get(worker.id)!, worker.account, '123450007')] }),
    );
    expect(corrected.data!.outcomes[0]).toMatchObject({ outcome: 'applied', account_updated: true });
    // The old trace's return: the deposit is marked returned, the corrected account is not touched.
    const late = await postFile(
      org,
      fileFor(org, { returns: [returnOf(first.stubs.get(worker.id)!, 'R03', worker.account)] }),
    );
    expect(late.data!.outcomes[0]).toMatchObject({ outcome: 'applied' });
    const account = (await org.api.GET('/v1/employees/{id}', at(worker.id))).data!.data.bank_account!;
    expect(account).toMatchObject({ routing_number: '021000021', account_number_last4: '0007', status: 'active' });
    // A deposit to the corrected account, returned R03, does make it invalid.
    const second = await paid(org, [worker.id]);
    const returned = await postFile(
      org,
      bankReturnFile(
        {
          odfiRouting: org.odfi,
          rdfiRouting: '021000021',
          companyName: 'RETURNS E2E',
          companyIdentification: org.companyId,
        },
        { returns: [{ ...returnOf(second.stubs.get(worker.id)!, 'R03', '123450007'), routing: '021000021' }] },
      ),
    );
    expect(returned.data!.outcomes[0]).toMatchObject({ outcome: 'applied' });
    expect((await org.api.GET('/v1/employees/{id}', at(worker.id))).data!.data.bank_account!.status).toBe('invalid');
  });

  it('refuses every broken file the review had applied, applies nothing of it, and refuses a return of another amount', async () => {
    const org = await newOrg('Guards Files');
    const worker = await hire(org);
    const run = await paid(org, [worker.id]);
    const stub = run.stubs.get(worker.id)!;
    const good = fileFor(org, { returns: [returnOf(stub, 'R01', worker.account)] });
    const lines = good.split('\n');
    const lineOf = (type: string) => lines.findIndex((l) => l.startsWith(type)) + 1;
    const broken: Record<string, string> = {
      'a file header that is just 1': corruptLine(good, lineOf('1'), () => '1'),
      'a batch header cut at column 54': corruptLine(good, lineOf('5'), (l) => l.slice(0, 54)),
      'a batch control without company id and batch number': corruptLine(
        good,
        lineOf('8'),
        (l) => `${l.slice(0, 44)}${' '.repeat(10)}${l.slice(54, 87)}${' '.repeat(7)}`,
      ),
      'a batch control naming another company': corruptLine(
        good,
        lineOf('8'),
        (l) => `${l.slice(0, 44)}9999999999${l.slice(54)}`,
      ),
      'a block count XXXXXX': corruptLine(good, lineOf('9'), (l) => `${l.slice(0, 7)}XXXXXX${l.slice(13)}`),
      'a file control cut short': corruptLine(good, lineOf('9'), (l) => l.slice(0, 30)),
    };
    for (const [what, file] of Object.entries(broken)) {
      const res = await postFile(org, file);
      expect(res.status, what).toBe(400);
      expect(res.error!.error.code, what).toBe('invalid_request_body');
    }
    expect((await stubOf(org, run.payrollId, worker.id)).payment.status).toBe('scheduled');
    const tenDollars = await postFile(
      org,
      fileFor(org, { returns: [{ ...returnOf(stub, 'R01', worker.account), amountCents: 1000 }] }),
    );
    expect(tenDollars.data!.outcomes[0]).toMatchObject({ outcome: 'amount_mismatch', paystub_id: stub.paystub_id });
    expect((await stubOf(org, run.payrollId, worker.id)).payment.status).toBe('scheduled');
    // The good file is applied now: nothing before it was.
    expect((await postFile(org, good)).data!.outcomes[0]!.outcome).toBe('applied');
  });

  it('reads request bodies as written: a key twice, decimals past two, blanks around a number', async () => {
    const org = await newOrg('Guards JSON');
    const worker = await hire(org);
    const entry = (gross: string) =>
      `{"pay_period_start":"2025-01-06","pay_period_end":"2025-01-19","pay_date":"2025-01-24",` +
      `"employees":[{"employee_id":"${worker.id}","hours_worked":80,${gross}}]}`;
    // Sent as text: a JSON serializer could not write a key twice or a number past a double's digits.
    const dryRun = (text: string) =>
      stack.request('POST', '/v1/payroll?dry_run=true', { token: org.token, body: text });
    const twice = await dryRun(entry('"gross_pay":"1000","gross_pay":"999999"'));
    expect(twice.status).toBe(400);
    expect(twice.body.error).toMatchObject({ code: 'invalid_request_body' });
    expect(twice.body.error.details[0]).toMatchObject({ code: 'duplicate_key', field: 'employees[0].gross_pay' });
    const sameTwice = await dryRun(entry('"gross_pay":1000,"gross_pay":1000'));
    expect(sameTwice.status).toBe(400);
    const tooPrecise = await dryRun(entry('"gross_pay":1000.00000000000001'));
    expect(tooPrecise.status).toBe(400);
    expect(tooPrecise.body.error.details[0]).toMatchObject({
      field: 'employees[0].gross_pay',
      message: expect.stringMatching(/two decimal/),
    });
    const blanks = await dryRun(entry('"gross_pay":" 10"'));
    expect(blanks.status).toBe(400);
    expect(blanks.body.error.details[0]).toMatchObject({
      field: 'employees[0].gross_pay',
      message: expect.stringMatching(/decimal amount/),
    });
    const fine = await dryRun(entry('"gross_pay":1000.10'));
    expect(fine.status).toBe(200);
  });

  it("never serves an object put where the run's file lives unless the processor sealed it under the run's key", async () => {
    const org = await newOrg('Guards Sealed');
    const worker = await hire(org);
    const run = await paid(org, [worker.id]);
    const s3 = localS3Client(stack.state.s3_endpoint, stack.state.region);
    const list = await s3.send(new ListObjectsV2Command({ Bucket: stack.state.bucket, Prefix: 'payrolls/org_' }));
    const key = list.Contents!.map((o) => o.Key!).find((k) => k.endsWith(`/${run.payrollId}/disbursement.ach`))!;
    const sealed = await (
      await s3.send(new GetObjectCommand({ Bucket: stack.state.bucket, Key: key }))
    ).Body!.transformToString();
    expect(sealed.startsWith('sealed-nacha.v1.')).toBe(true);
    expect(sealed).not.toContain(worker.account);
    // Someone with write access to the bucket puts a file of their own there.
    const forged = '101 021000021 1000000001261128 ATTACKER FILE WITH ANOTHER ACCOUNT 666666666\n';
    await s3.send(new PutObjectCommand({ Bucket: stack.state.bucket, Key: key, Body: forged }));
    const served = await org.api.GET('/v1/payroll/{id}/disbursement', { ...at(run.payrollId), parseAs: 'text' });
    expect(served.response.status).toBe(500);
    expect(asReceived(served.response).text).not.toContain('666666666');
  });

  it('answers a second cancel with 409 payroll_not_cancellable', async () => {
    const org = await newOrg('Guards Cancel');
    const worker = await hire(org);
    const run = await paid(org, [worker.id]);
    expect((await org.api.POST('/v1/payroll/{id}/cancel', at(run.payrollId))).response.status).toBe(200);
    const again = await org.api.POST('/v1/payroll/{id}/cancel', at(run.payrollId));
    expect(again.response.status).toBe(409);
    expect(again.error!.error.code).toBe('payroll_not_cancellable');
    const file = await org.api.GET('/v1/payroll/{id}/disbursement', { ...at(run.payrollId), parseAs: 'text' });
    expect(file.response.status).toBe(410);
  });
});
