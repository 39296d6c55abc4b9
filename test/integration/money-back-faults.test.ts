import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { Transactions } from '../../shared/data/item.js';
import type { PaystubRecord } from '../../shared/data/paystub-repository.js';
import type { BankReportItem } from '../../shared/domain/returns.js';
import { cancelPayroll } from '../../shared/use-cases/cancel-payroll.js';
import { applyBankReport } from '../../shared/use-cases/disbursement-returns.js';
import { redebitFunding } from '../../shared/use-cases/money-back/funding.js';
import { reversePayments } from '../../shared/use-cases/money-back/reversals.js';
import { runPaystubIds } from '../../shared/use-cases/process-payroll.js';
import { updateSettings } from '../../shared/use-cases/settings.js';
import { testS3Client } from '../support/engines.js';
import { drain, payrollBody, payrollWorld, submitRun } from '../support/payroll-fixture.js';

/**
 * What happens to money when something fails half-way (RELIABILITY.md), on the real engines: a crash between
 * writing a reversal or re-debit file and the transaction that lists it and marks the payments; a return that
 * arrives twice at once; a return of an entry the service never wrote.
 */

type World = Awaited<ReturnType<typeof payrollWorld>>;

const FUNDING = { routing_number: '011000015', account_number: '99887766554433', account_type: 'checking' } as const;
const iso = (d: Date) => d.toISOString().slice(0, 10);

async function paidRun(world: World): Promise<{ payrollId: string; stubs: PaystubRecord[] }> {
  const orgId = world.org.organization_id;
  await updateSettings(world.services, { organizationId: orgId, environment: 'sandbox' }, { funding_account: FUNDING });
  // Paid in ten days: its payments are inside their reversal window whatever today is.
  const payDate = new Date(Date.now() + 10 * 86_400_000);
  const body = payrollBody(world.employeeIds, {
    type: 'off_cycle',
    pay_period_start: iso(new Date(payDate.getTime() - 19 * 86_400_000)),
    pay_period_end: iso(new Date(payDate.getTime() - 5 * 86_400_000)),
    pay_date: iso(payDate),
  });
  const payrollId = await submitRun(world, body, 2);
  await drain(world.services, world.queues.payroll, orgId, payrollId);
  const record = (await world.services.payrolls.get(orgId, payrollId))!;
  expect(record.status).toBe('completed');
  const stubs = await world.services.paystubs.getMany(await runPaystubIds(world.services, record));
  return { payrollId, stubs };
}

/** The services with a transaction writer that fails like a process killed before its write (once). */
function crashingOnce(world: World) {
  let crashed = false;
  const real = world.services.transactions;
  const transactions = Object.assign(Object.create(Transactions.prototype), {
    write: async (items: Parameters<Transactions['write']>[0]) => {
      if (!crashed) {
        crashed = true;
        throw new Error('Task timed out before the transaction was sent');
      }
      return real.write(items);
    },
  }) as Transactions;
  return { ...world.services, transactions };
}

async function objectsUnder(world: World, prefix: string): Promise<string[]> {
  const out = await testS3Client().send(new ListObjectsV2Command({ Bucket: world.bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

describe('money back when something fails half-way', () => {
  it('a crash between writing a reversal file and marking the payments: nothing reversed, nothing listed; the retry writes one file', async () => {
    const world = await payrollWorld(3);
    const orgId = world.org.organization_id;
    const { payrollId, stubs } = await paidRun(world);
    const request = { reason: 'duplicate' as const, paystub_ids: [stubs[0]!.paystub_id] };

    await expect(reversePayments(crashingOnce(world), orgId, payrollId, request, 'key-1')).rejects.toThrow(/timed out/);
    // The sealed object was written, but no transaction listed it: it is never served or sent, and no money moved.
    const orphans = await objectsUnder(world, `payrolls/${orgId}/${payrollId}/files/`);
    expect(orphans).toHaveLength(1);
    expect((await world.services.disbursementFiles.list(orgId, { type: 'reversal' }, 10)).items).toEqual([]);
    expect((await world.services.paystubs.get(orgId, stubs[0]!.paystub_id))!.payment.status).toBe('scheduled');
    expect((await world.services.payrolls.get(orgId, payrollId))!.reversals_count).toBe(0);

    // The client retries with its key: one file, the payment reversed once, no trace number skipped or reused.
    const retried = await reversePayments(world.services, orgId, payrollId, request, 'key-1');
    expect(retried.replayed).toBe(false);
    const again = await reversePayments(world.services, orgId, payrollId, request, 'key-1');
    expect(again).toMatchObject({ replayed: true, file: { file_id: retried.file.file_id } });
    const listed = (await world.services.disbursementFiles.list(orgId, { type: 'reversal' }, 10)).items;
    expect(listed.map((f) => f.file_id)).toEqual([retried.file.file_id]);
    const run = (await world.services.payrolls.get(orgId, payrollId))!;
    const lastPayrollTrace = Number(run.funding!.trace_number.slice(8));
    expect(Number(retried.file.entries[0]!.trace_number.slice(8))).toBe(lastPayrollTrace + 1);
    expect(run.reversals_count).toBe(1);
  });

  it('a crash between writing a re-debit file and marking the funding: still returned and held; the retry re-debits once', async () => {
    const world = await payrollWorld(2);
    const orgId = world.org.organization_id;
    const { payrollId } = await paidRun(world);
    const run = (await world.services.payrolls.get(orgId, payrollId))!;
    const funding = run.funding!;
    const returned: BankReportItem = {
      type: 'return',
      trace_number: funding.trace_number,
      code: 'R01',
      amount_cents: funding.amount,
    };
    // The same return twice at once: applied once, one hold, one event.
    const [first, second] = await Promise.all([
      applyBankReport(world.services, orgId, [returned]),
      applyBankReport(world.services, orgId, [returned]),
    ]);
    expect([first[0]!.outcome, second[0]!.outcome].sort()).toEqual(['already_applied', 'applied']);
    expect(await world.services.organizations.fundingHolds(orgId)).toHaveLength(1);
    const events = await world.services.events.list(orgId, { type: 'payroll.funding_returned' }, 10);
    expect(events.items).toHaveLength(1);

    await expect(redebitFunding(crashingOnce(world), orgId, payrollId)).rejects.toThrow(/timed out/);
    expect((await world.services.payrolls.get(orgId, payrollId))!.funding!.status).toBe('returned');
    expect(await world.services.organizations.fundingHolds(orgId)).toHaveLength(1);
    expect((await world.services.disbursementFiles.list(orgId, { type: 'redebit' }, 10)).items).toEqual([]);

    const after = await redebitFunding(world.services, orgId, payrollId);
    expect(after.funding).toMatchObject({ status: 'redebit_scheduled' });
    expect(after.funding!.redebits).toHaveLength(1);
    expect(await world.services.organizations.fundingHolds(orgId)).toEqual([]);
    // Two re-debits at once: the second finds the debit no longer returned.
    await expect(redebitFunding(world.services, orgId, payrollId)).rejects.toMatchObject({
      code: 'redebit_not_allowed',
    });
  });

  it('a cancel that read the run before a reversal committed is refused by its own write: the reversal file stays live, the run completed', async () => {
    const world = await payrollWorld(3);
    const orgId = world.org.organization_id;
    const { payrollId, stubs } = await paidRun(world);
    const stale = (await world.services.payrolls.get(orgId, payrollId))!;
    const request = { reason: 'duplicate' as const, paystub_ids: [stubs[0]!.paystub_id] };
    await reversePayments(world.services, orgId, payrollId, request, 'race-1');
    // The cancel as it would run having read the run a moment before the reversal: its read is the stale record.
    const racing = {
      ...world.services,
      payrolls: Object.assign(Object.create(Object.getPrototypeOf(world.services.payrolls)), world.services.payrolls, {
        get: (() => {
          let first = true;
          return async (o: string, p: string) => {
            if (first) {
              first = false;
              return stale;
            }
            return world.services.payrolls.get(o, p);
          };
        })(),
      }) as typeof world.services.payrolls,
    };
    await expect(cancelPayroll(racing, 'sandbox', orgId, payrollId)).rejects.toMatchObject({
      code: 'payroll_not_cancellable',
    });
    const run = (await world.services.payrolls.get(orgId, payrollId))!;
    expect(run).toMatchObject({ status: 'completed', reversals_count: 1 });
    const [payrollFile] = (await world.services.disbursementFiles.list(orgId, { type: 'payroll' }, 10)).items;
    const [reversalFile] = (await world.services.disbursementFiles.list(orgId, { type: 'reversal' }, 10)).items;
    expect(payrollFile!.status).toBe('ready');
    expect(reversalFile!.status).toBe('ready');
  });

  it('a return that meets another transaction on its run is retried, never answered as done or unknown', async () => {
    const world = await payrollWorld(1);
    const orgId = world.org.organization_id;
    const { payrollId } = await paidRun(world);
    const funding = (await world.services.payrolls.get(orgId, payrollId))!.funding!;
    // DynamoDB cancels a transaction that meets another on an item with no failed condition: reasons all false.
    const real = world.services.transactions;
    let conflicts = 2;
    const transactions = Object.assign(Object.create(Transactions.prototype), {
      write: async (items: Parameters<Transactions['write']>[0]) => {
        if (conflicts-- > 0) return items.map(() => false);
        return real.write(items);
      },
    }) as Transactions;
    const outcomes = await applyBankReport({ ...world.services, transactions }, orgId, [
      { type: 'return', trace_number: funding.trace_number, code: 'R01', amount_cents: funding.amount },
    ]);
    expect(outcomes[0]!.outcome).toBe('applied');
    expect(await world.services.organizations.fundingHolds(orgId)).toHaveLength(1);
    expect((await world.services.payrolls.get(orgId, payrollId))!.funding!.status).toBe('returned');
  });

  it('a return of an entry the service never wrote changes nothing', async () => {
    const world = await payrollWorld(1);
    const orgId = world.org.organization_id;
    const { payrollId } = await paidRun(world);
    const run = (await world.services.payrolls.get(orgId, payrollId))!;
    const beyond = `${run.funding!.trace_number.slice(0, 8)}${String(Number(run.funding!.trace_number.slice(8)) + 50).padStart(7, '0')}`;
    const outcomes = await applyBankReport(world.services, orgId, [
      { type: 'return', trace_number: beyond, code: 'R01', amount_cents: 100 },
      { type: 'return', trace_number: '091000010000001', code: 'R01', amount_cents: 100 },
    ]);
    expect(outcomes.map((o) => o.outcome)).toEqual(['unknown_trace', 'unknown_trace']);
    expect(await world.services.organizations.fundingHolds(orgId)).toEqual([]);
    expect((await world.services.payrolls.get(orgId, payrollId))!.funding!.status).toBe('scheduled');
  });
});
