import { describe, expect, it } from 'vitest';
import { SandboxOnlyError } from '../../shared/domain/errors.js';
import { approvePayroll, payrollBlockers } from '../../shared/use-cases/approve-payroll.js';
import { cancelPayroll } from '../../shared/use-cases/cancel-payroll.js';
import { updateSettings } from '../../shared/use-cases/settings.js';
import { submitPayroll } from '../../shared/use-cases/submit-payroll.js';
import { drain, payrollBody, payrollWorld } from '../support/payroll-fixture.js';

/**
 * Approval in production, on the real engines (CONTRACT §11): the deadline (a run not approved by its release day's
 * cut-off, New York time, is blocked with the earliest pay date still possible) and cancelling a run awaiting
 * approval, which production allows where it refuses any other cancel. The clock is the test's.
 */
async function productionRun(now: Date) {
  const world = await payrollWorld(2);
  const orgId = world.org.organization_id;
  const caller = { organizationId: orgId, environment: 'production' as const, apiKeyId: 'key_submitter' };
  await updateSettings(world.services, caller, { payroll_approval: 'required', approval_cutoff_time: '15:00' });
  const services = { ...world.services, chunkSize: 1000, deps: { ...world.services.deps, now: () => now } };
  // Pay date Friday 2026-12-11: release by Thursday 10 December, approve by 15:00 New York (20:00Z) that day.
  const outcome = await submitPayroll(services, caller, payrollBody(world.employeeIds, { pay_date: '2026-12-11' }), {
    dryRun: false,
  });
  if (outcome.kind !== 'accepted') throw new Error('expected acceptance');
  return { world, orgId, services, payrollId: outcome.data.payroll_id, approveBy: outcome.data.approve_by };
}

describe('approval in production', () => {
  it('blocks a run once its approve_by has passed, naming the earliest pay date still possible', async () => {
    const { world, orgId, services, payrollId, approveBy } = await productionRun(new Date('2026-12-07T15:00:00Z'));
    expect(approveBy).toBe('2026-12-10T20:00:00.000Z');
    const record = (await world.services.payrolls.get(orgId, payrollId))!;
    expect(record.status).toBe('awaiting_approval');
    // A minute before the cut-off: nothing blocks it.
    expect(await payrollBlockers(world.services, record, new Date('2026-12-10T19:59:00Z'))).toEqual([]);
    // A minute after: blocked; Thursday's release is gone, so Friday releases and Monday 14 December is the earliest.
    expect(await payrollBlockers(world.services, record, new Date('2026-12-10T20:01:00Z'))).toEqual([
      expect.objectContaining({ code: 'approval_deadline_passed', earliest_pay_date: '2026-12-14' }),
    ]);
    const late = { ...services, deps: { ...services.deps, now: () => new Date('2026-12-10T20:01:00Z') } };
    await expect(
      approvePayroll(late, { organizationId: orgId, environment: 'production', apiKeyId: 'key_approver' }, payrollId),
    ).rejects.toMatchObject({
      code: 'payroll_blocked',
      details: [expect.objectContaining({ code: 'approval_deadline_passed' })],
    });
    // In time, by another key: approved, and it runs.
    const onTime = { ...services, deps: { ...services.deps, now: () => new Date('2026-12-10T19:00:00Z') } };
    const approved = await approvePayroll(
      onTime,
      { organizationId: orgId, environment: 'production', apiKeyId: 'key_approver' },
      payrollId,
    );
    expect(approved).toMatchObject({ status: 'pending', approved_by: { api_key_id: 'key_approver' } });
    await drain(world.services, world.queues.payroll, orgId, payrollId);
    expect((await world.services.payrolls.get(orgId, payrollId))!.status).toBe('completed');
    // Production refuses a cancel past approval.
    await expect(cancelPayroll(world.services, 'production', orgId, payrollId)).rejects.toBeInstanceOf(
      SandboxOnlyError,
    );
  });

  it('cancels a run awaiting approval, releasing its window; an unknown run is refused as any other cancel there', async () => {
    const { world, orgId, payrollId } = await productionRun(new Date('2026-12-07T15:00:00Z'));
    const cancelled = await cancelPayroll(world.services, 'production', orgId, payrollId);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.status_history.map((h) => h.status)).toEqual(['awaiting_approval', 'cancelled']);
    expect(await world.services.payrolls.getWindow(orgId, '2026-11-01', '2026-11-14')).toBeUndefined();
    await expect(cancelPayroll(world.services, 'production', orgId, 'pay_unknown')).rejects.toBeInstanceOf(
      SandboxOnlyError,
    );
  });

  it('refuses a production cancel that meets a run approved a moment before: the run stays approved', async () => {
    const { world, orgId, services, payrollId } = await productionRun(new Date('2026-12-07T15:00:00Z'));
    const approver = { organizationId: orgId, environment: 'production' as const, apiKeyId: 'key_approver' };
    // The cancel reads the run awaiting approval; the approval lands before the cancel writes.
    let approvedInBetween = false;
    const payrolls = Object.create(world.services.payrolls) as typeof world.services.payrolls;
    payrolls.get = async (...args) => {
      const read = await world.services.payrolls.get(...args);
      if (!approvedInBetween) {
        approvedInBetween = true;
        await approvePayroll(services, approver, payrollId);
      }
      return read;
    };
    await expect(cancelPayroll({ ...world.services, payrolls }, 'production', orgId, payrollId)).rejects.toBeInstanceOf(
      SandboxOnlyError,
    );
    const run = (await world.services.payrolls.get(orgId, payrollId))!;
    expect(run.status).toBe('pending');
    expect(run.status_history.map((h) => h.status)).toEqual(['awaiting_approval', 'pending']);
  });

  it('refuses a production submission whose approval deadline has already passed, naming the earliest pay date', async () => {
    const world = await payrollWorld(1);
    const orgId = world.org.organization_id;
    const caller = { organizationId: orgId, environment: 'production' as const, apiKeyId: 'key_submitter' };
    await updateSettings(world.services, caller, { payroll_approval: 'required', approval_cutoff_time: '15:00' });
    // Monday 7 December 2026, 16:00 in New York: Tuesday's pay date released today, whose cut-off has passed.
    const now = new Date('2026-12-07T21:00:00Z');
    const services = { ...world.services, chunkSize: 1000, deps: { ...world.services.deps, now: () => now } };
    const body = payrollBody(world.employeeIds, { pay_date: '2026-12-08' });
    await expect(submitPayroll(services, caller, body, { dryRun: false })).rejects.toMatchObject({
      code: 'pay_date_too_soon',
      details: [expect.objectContaining({ field: 'pay_date', earliest_pay_date: '2026-12-09' })],
    });
    const fine = await submitPayroll(services, caller, payrollBody(world.employeeIds, { pay_date: '2026-12-09' }), {
      dryRun: false,
    });
    expect(fine.kind).toBe('accepted');
  });
});
