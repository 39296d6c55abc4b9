import { DeleteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../shared/data/keys.js';
import { describe, expect, it } from 'vitest';
import type { PaystubRecord } from '../../shared/data/paystub-repository.js';
import { runPaystubIds } from '../../shared/use-cases/process-payroll.js';
import type { BankReportItem } from '../../shared/domain/returns.js';
import { cancelPayroll } from '../../shared/use-cases/cancel-payroll.js';
import { processMessage } from '../../shared/use-cases/process-payroll.js';
import { applyBankReport } from '../../shared/use-cases/disbursement-returns.js';
import { updateEmployee } from '../../shared/use-cases/employees.js';
import { drain, payrollBody, payrollWorld, submitRun } from '../support/payroll-fixture.js';

/**
 * Applying what the bank reports, on the real engines (DynamoDB Local, the S3 and SQS engines): exactly once under
 * concurrency, and a correction only to the account the deposit went to.
 */

type World = Awaited<ReturnType<typeof payrollWorld>>;

async function completedRun(world: World): Promise<{ payrollId: string; stubs: PaystubRecord[] }> {
  const orgId = world.org.organization_id;
  const payrollId = await submitRun(world, payrollBody(world.employeeIds), 2);
  await drain(world.services, world.queues.payroll, orgId, payrollId);
  const record = (await world.services.payrolls.get(orgId, payrollId))!;
  expect(record.status).toBe('completed');
  // In submission order, as the employees are.
  const ids = await runPaystubIds(world.services, record);
  const found = new Map((await world.services.paystubs.getMany(ids)).map((p) => [p.paystub_id, p]));
  const stubs = ids.map((id) => found.get(id)!);
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

  it('keeps a return that lands while the run is cancelled (sandbox), and a repost then changes nothing', async () => {
    const world = await payrollWorld(4);
    const orgId = world.org.organization_id;
    const run = await completedRun(world);
    const items: BankReportItem[] = run.stubs.map((p) => ({
      type: 'return',
      trace_number: p.payment.trace_number!,
      code: 'R01',
    }));
    // The cancel voids paystubs while the returns are applied; whichever comes first, no return is lost.
    await Promise.all([
      cancelPayroll(world.services, 'sandbox', orgId, run.payrollId),
      applyBankReport(services(world), orgId, items),
    ]);
    const after = await world.services.paystubs.getMany(run.stubs.map((p) => p.paystub_id));
    expect(after.every((p) => p.status === 'voided')).toBe(true);
    const returned = after.filter((p) => p.payment.status === 'returned');
    expect(returned.every((p) => p.payment.return?.code === 'R01')).toBe(true);
    expect(after.filter((p) => p.payment.status === 'cancelled')).toHaveLength(4 - returned.length);
    const count = (await world.services.payrolls.get(orgId, run.payrollId))!.returns_count;
    expect(count).toBe(returned.length);
    // Posting again: the returned ones are already applied, the cancelled ones were never released.
    const again = await applyBankReport(services(world), orgId, items);
    expect(again.filter((o) => o.outcome === 'applied')).toEqual([]);
    expect((await world.services.payrolls.get(orgId, run.payrollId))!.returns_count).toBe(count);
    const events = (await world.services.events.list(orgId, { type: 'payment.returned' }, 100)).items;
    expect(events).toHaveLength(count);
  });

  it("answers unknown_trace for another company's batch, and finds runs planned before trace blocks existed", async () => {
    const world = await payrollWorld(2);
    const orgId = world.org.organization_id;
    const run = await completedRun(world);
    const trace = run.stubs[0]!.payment.trace_number!;
    const company = (await world.services.payrolls.get(orgId, run.payrollId))!.originator!;
    const other = await applyBankReport(services(world), orgId, [
      { type: 'return', trace_number: trace, code: 'R01', company_identification: 'OTHERCO123' },
    ]);
    expect(other[0]!.outcome).toBe('unknown_trace');
    // A run planned before blocks were recorded: its block item is absent, its trace_start is on the run.
    const blocks = await world.table.doc.send(
      new QueryCommand({
        TableName: world.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': `ORG#${orgId}`, ':prefix': 'TRACEBLOCK#' },
      }),
    );
    expect(blocks.Items).toHaveLength(1);
    await world.table.doc.send(
      new DeleteCommand({
        TableName: world.table.tableName,
        Key: { PK: blocks.Items![0]!.PK, SK: blocks.Items![0]!.SK },
      }),
    );
    const legacy = await applyBankReport(services(world), orgId, [
      { type: 'return', trace_number: trace, code: 'R01', company_identification: company.company_identification },
    ]);
    expect(legacy[0]).toMatchObject({ outcome: 'applied', paystub_id: run.stubs[0]!.paystub_id });
  });

  it('leaves alone a new account that only looks like the one paid (same bank, type and last four digits)', async () => {
    const world = await payrollWorld(1, { accountNumber: () => '11110000' });
    const orgId = world.org.organization_id;
    const run = await completedRun(world);
    const [employee] = world.employeeIds;
    await updateEmployee(world.services, orgId, employee!, {
      bank_account: { account_number: '22220000', routing_number: '021000021', account_type: 'checking' },
    });
    const stub = run.stubs[0]!;
    expect(stub.payment).toMatchObject({ routing_number: '021000021', account_type: 'checking' });
    const [outcome] = await applyBankReport(services(world), orgId, [
      { type: 'return', trace_number: stub.payment.trace_number!, code: 'R02' },
    ]);
    expect(outcome!.outcome).toBe('applied');
    // The payment is returned, but the account it went to is no longer the employee's: the new one stays active.
    expect((await world.services.employees.get(orgId, employee!))!.bank_account!.status).toBe('active');
  });

  it('leaves alone an account corrected since a deposit made before account references existed', async () => {
    const world = await payrollWorld(1, { accountNumber: () => '0012345678' });
    const orgId = world.org.organization_id;
    const run = await completedRun(world);
    const [employee] = world.employeeIds;
    const stub = run.stubs[0]!;
    // The deposit and the account as written before references: neither carries an account_ref.
    await world.table.doc.send(
      new UpdateCommand({
        TableName: world.table.tableName,
        Key: keys.paystub(stub.paystub_id),
        UpdateExpression: 'REMOVE payment.account_ref',
      }),
    );
    await world.table.doc.send(
      new UpdateCommand({
        TableName: world.table.tableName,
        Key: keys.employee(orgId, employee!),
        UpdateExpression: 'SET bank_account.account_ref = :none',
        ExpressionAttributeValues: { ':none': null },
      }),
    );
    // A correction to the same last four digits, matched the old way: the account becomes a new version, with a
    // reference of its own.
    const corrected = await applyBankReport(services(world), orgId, [
      {
        type: 'correction',
        trace_number: stub.payment.trace_number!,
        code: 'C01',
        corrected: { account_number: '12345678' },
      },
    ]);
    expect(corrected[0]).toMatchObject({ outcome: 'applied', account_updated: true });
    // A late R03 of that old deposit (no reference) no longer matches the corrected account (it has one).
    const account = (await world.services.employees.get(orgId, employee!))!.bank_account!;
    expect(account.account_ref).toEqual(expect.any(String));
    const [late] = await applyBankReport(services(world), orgId, [
      { type: 'return', trace_number: stub.payment.trace_number!, code: 'R03' },
    ]);
    expect(late!.outcome).toBe('applied');
    expect((await world.services.employees.get(orgId, employee!))!.bank_account!.status).toBe('active');
  });

  it('keeps the paystubs of a completed run when a late duplicate of one of its chunks arrives', async () => {
    const world = await payrollWorld(3);
    const orgId = world.org.organization_id;
    const run = await completedRun(world);
    // The duplicate read the run while it was still processing (a stale read), and reaches its end after completion.
    const record = (await world.services.payrolls.get(orgId, run.payrollId))!;
    const real = world.services.payrolls.get.bind(world.services.payrolls);
    let stale = true;
    world.services.payrolls.get = async (o, id) => {
      if (stale) {
        stale = false;
        return { ...record, status: 'processing', chunks_done: new Set() };
      }
      return real(o, id);
    };
    await processMessage(world.services, {
      kind: 'chunk',
      organization_id: orgId,
      payroll_id: run.payrollId,
      chunk: 0,
    });
    world.services.payrolls.get = real;
    const after = await world.services.paystubs.getMany(run.stubs.map((p) => p.paystub_id));
    expect(after.map((p) => [p.status, p.payment.status])).toEqual(run.stubs.map(() => ['issued', 'scheduled']));
  });
});
