import { afterEach, describe, expect, it, vi } from 'vitest';
import { METRIC_NAMES } from '../../shared/adapters/metric-names.js';
import { businessMetrics, type MetricName } from '../../shared/adapters/observability.js';
import type { BankReportItem } from '../../shared/domain/returns.js';
import { SIMULATE_FAIL_NOTE } from '../../shared/adapters/sandbox-bank.js';
import { applyBankReport } from '../../shared/use-cases/disbursement-returns.js';
import {
  processMessage,
  type ProcessorMessage,
  type ProcessorServices,
  runPaystubIds,
} from '../../shared/use-cases/process-payroll.js';
import { submitPayroll } from '../../shared/use-cases/submit-payroll.js';
import { drain, payrollBody, payrollWorld } from '../support/payroll-fixture.js';

/**
 * The business metrics count each thing once, where it happens, however often its message is delivered: every
 * processor message here runs twice at once and then once more (SQS delivers at least once, and a duplicate may
 * race its twin), a submission is replayed with its idempotency key, a bank report is applied twice. Real engines
 * (DynamoDB Local, the S3 and SQS engines); the counts are read off the adapter the use cases count through.
 */

afterEach(() => {
  vi.restoreAllMocks();
});

function counter() {
  const spy = vi.spyOn(businessMetrics, 'count');
  return (name: MetricName) =>
    spy.mock.calls.filter(([n]) => n === name).reduce((sum, [, value]) => sum + (value ?? 1), 0);
}

/** Each message handled by two twins at once, then delivered once more after both finished. */
async function thrice(s: ProcessorServices, m: ProcessorMessage): Promise<void> {
  await Promise.all([processMessage(s, m), processMessage(s, m)]);
  await processMessage(s, m);
}

describe('business metrics, counted once at the transition', () => {
  it('counts a run submitted, its paystubs, its completion and its returns once each, whatever is repeated', async () => {
    const world = await payrollWorld(60);
    const count = counter();
    const orgId = world.org.organization_id;
    const caller = { organizationId: orgId, environment: 'sandbox' as const };
    const body = payrollBody(world.employeeIds);
    const submission = { ...world.services, chunkSize: 25 };
    expect((await submitPayroll(submission, caller, body, { dryRun: true })).kind).toBe('dry_run');
    const first = await submitPayroll(submission, caller, body, { dryRun: false, idempotencyKey: 'metrics-1' });
    const replay = await submitPayroll(submission, caller, body, { dryRun: false, idempotencyKey: 'metrics-1' });
    expect(first.kind).toBe('accepted');
    expect(replay).toMatchObject({ kind: 'accepted', replayed: true });
    const payrollId = (first as { data: { payroll_id: string } }).data.payroll_id;
    await drain(world.services, world.queues.payroll, orgId, payrollId, thrice);

    const record = (await world.services.payrolls.get(orgId, payrollId))!;
    expect(record).toMatchObject({ status: 'completed', chunk_count: 3, returns_count: 0 });
    expect(count(METRIC_NAMES.payrollsSubmitted)).toBe(1);
    expect(count(METRIC_NAMES.paystubsWritten)).toBe(60);
    expect(count(METRIC_NAMES.payrollsCompleted)).toBe(1);
    expect(count(METRIC_NAMES.payrollsFailed)).toBe(0);
    expect(count(METRIC_NAMES.returnsApplied)).toBe(0);

    // A report of one return and one correction (C01: a new account number), applied twice at once, then again.
    const stubs = await world.services.paystubs.getMany(await runPaystubIds(world.services, record));
    const [returned, corrected] = stubs.filter((p) => p.payment.status === 'scheduled');
    const items: BankReportItem[] = [
      { type: 'return', trace_number: returned!.payment.trace_number!, code: 'R01' },
      {
        type: 'correction',
        trace_number: corrected!.payment.trace_number!,
        code: 'C01',
        corrected: { account_number: '55550000' },
      },
    ];
    await Promise.all([applyBankReport(world.services, orgId, items), applyBankReport(world.services, orgId, items)]);
    await applyBankReport(world.services, orgId, items);
    expect(count(METRIC_NAMES.returnsApplied)).toBe(1);
    expect(count(METRIC_NAMES.correctionsApplied)).toBe(1);
  });

  it('counts a failed run once, and no completion', async () => {
    const world = await payrollWorld(30);
    const count = counter();
    const orgId = world.org.organization_id;
    const body = payrollBody(world.employeeIds);
    body.employees[0] = { ...body.employees[0]!, notes: SIMULATE_FAIL_NOTE } as (typeof body.employees)[number];
    const outcome = await submitPayroll(
      { ...world.services, chunkSize: 25 },
      { organizationId: orgId, environment: 'sandbox' },
      body,
      { dryRun: false },
    );
    const payrollId = (outcome as { data: { payroll_id: string } }).data.payroll_id;
    await drain(world.services, world.queues.payroll, orgId, payrollId, thrice);
    expect((await world.services.payrolls.get(orgId, payrollId))!.status).toBe('failed');
    expect(count(METRIC_NAMES.payrollsSubmitted)).toBe(1);
    expect(count(METRIC_NAMES.payrollsFailed)).toBe(1);
    expect(count(METRIC_NAMES.payrollsCompleted)).toBe(0);
    // Its chunks wrote their paystubs (voided since), once each.
    expect(count(METRIC_NAMES.paystubsWritten)).toBe(30);
  });
});
