import { describe, expect, it } from 'vitest';
import { paystubIdFor, type PaystubRecord } from '../../shared/data/paystub-repository.js';
import type { BankReportItem } from '../../shared/domain/returns.js';
import { applyBankReport } from '../../shared/use-cases/disbursement-returns.js';
import { updateEmployee } from '../../shared/use-cases/employees.js';
import { submitPayroll } from '../../shared/use-cases/submit-payroll.js';
import { drain, payrollBody, payrollWorld } from '../support/payroll-fixture.js';

/**
 * Applying what the bank reports, on the real engines (DynamoDB Local, the S3 and SQS engines): exactly once under
 * concurrency, and a correction only to the account the deposit went to.
 */

type World = Awaited<ReturnType<typeof payrollWorld>>;

async function completedRun(world: World): Promise<{ payrollId: string; stubs: PaystubRecord[] }> {
  const orgId = world.org.organization_id;
  const outcome = await submitPayroll(
    { ...world.services, chunkSize: 2 },
    { organizationId: orgId, environment: 'sandbox' },
    payrollBody(world.employeeIds),
    { dryRun: false },
  );
  if (outcome.kind !== 'accepted') throw new Error('expected acceptance');
  const payrollId = outcome.data.payroll_id;
  await drain(world.services, world.queues.payroll, orgId, payrollId);
  expect((await world.services.payrolls.get(orgId, payrollId))!.status).toBe('completed');
  const stubs = await world.services.paystubs.getMany(world.employeeIds.map((id) => paystubIdFor(payrollId, id)));
  return { payrollId, stubs };
}

const services = (world: World) => world.services;

describe('applying a bank report on the real engines', () => {
  it('applies each of 5 items exactly once when 12 requests apply the same report at once', async () => {
    const world = await payrollWorld(5);
    const orgId = world.org.organization_id;
    const run = await completedRun(world);
    const items: BankReportItem[] = run.stubs.map((p, i) => ({
      type: 'return',
      trace_number: p.payment.trace_number!,
      code: i % 2 === 0 ? 'R03' : 'R01',
    }));
    const results = await Promise.all(Array.from({ length: 12 }, () => applyBankReport(services(world), orgId, items)));
    for (let i = 0; i < items.length; i++) {
      const outcomes = results.map((r) => r[i]!.outcome);
      expect(
        outcomes.filter((o) => o === 'applied'),
        `item ${i}`,
      ).toHaveLength(1);
      expect(
        outcomes.filter((o) => o === 'already_applied'),
        `item ${i}`,
      ).toHaveLength(11);
    }
    const record = (await world.services.payrolls.get(orgId, run.payrollId))!;
    expect(record.returns_count).toBe(5);
    expect(record.returns_amount).toBe(run.stubs.reduce((sum, p) => sum + p.net_pay, 0));
    const events = (await world.services.events.list(orgId, { type: 'payment.returned' }, 100)).items;
    expect(events).toHaveLength(5);
    const invalid = [...(await world.services.employees.getMany(orgId, world.employeeIds)).values()].filter(
      (e) => e.bank_account?.status === 'invalid',
    );
    expect(invalid).toHaveLength(3); // R03 on items 0, 2 and 4
  });

  it('records a correction but leaves an account the employee has replaced since the deposit', async () => {
    const world = await payrollWorld(2);
    const orgId = world.org.organization_id;
    const run = await completedRun(world);
    const [replaced, current] = world.employeeIds;
    await updateEmployee(world.services, orgId, replaced!, {
      bank_account: { account_number: '11112222', routing_number: '021000021', account_type: 'savings' },
    });
    const stubOf = (id: string) => run.stubs.find((p) => p.employee_id === id)!;
    const outcomes = await applyBankReport(services(world), orgId, [
      {
        type: 'correction',
        trace_number: stubOf(replaced!).payment.trace_number!,
        code: 'C01',
        corrected: { account_number: '99998888' },
      },
      {
        type: 'correction',
        trace_number: stubOf(current!).payment.trace_number!,
        code: 'C05',
        corrected: { account_type: 'savings' },
      },
      // A change code that is recorded, never applied (the individual's name).
      { type: 'correction', trace_number: stubOf(current!).payment.trace_number!, code: 'C04', corrected: {} },
    ]);
    expect(outcomes.map((o) => [o.outcome, o.account_updated])).toEqual([
      ['applied', false],
      ['applied', true],
      ['already_applied', true], // one notification of change per deposit: the first one stands
    ]);
    const employees = await world.services.employees.getMany(orgId, world.employeeIds);
    expect(employees.get(replaced!)!.bank_account).toMatchObject({ account_number_last4: '2222', corrected_at: null });
    expect(employees.get(current!)!.bank_account).toMatchObject({ account_type: 'savings' });
    expect(employees.get(current!)!.bank_account!.corrected_at).not.toBeNull();
    const recorded = await world.services.paystubs.get(orgId, stubOf(replaced!).paystub_id);
    expect(recorded!.payment.correction).toMatchObject({ code: 'C01', applied: false });
    const events = (await world.services.events.list(orgId, { type: 'employee.bank_account_corrected' }, 100)).items;
    expect(events.map((e) => e.data.employee_id)).toEqual([current]);
  });

  it('answers unknown_trace for a trace of no deposit: another ODFI, or a sequence past the entries of the run', async () => {
    const world = await payrollWorld(2);
    const orgId = world.org.organization_id;
    const run = await completedRun(world);
    const trace = run.stubs[0]!.payment.trace_number!;
    const past = `${trace.slice(0, 8)}${String(Number(trace.slice(8)) + 50).padStart(7, '0')}`;
    const outcomes = await applyBankReport(services(world), orgId, [
      { type: 'return', trace_number: `99999999${trace.slice(8)}`, code: 'R01' },
      { type: 'return', trace_number: past, code: 'R01' },
    ]);
    expect(outcomes.map((o) => o.outcome)).toEqual(['unknown_trace', 'unknown_trace']);
    expect((await world.services.payrolls.get(orgId, run.payrollId))!.returns_count).toBe(0);
  });
});
