import { ReceiveMessageCommand, DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { processMessage, type ProcessorMessage } from '../../shared/use-cases/process-payroll.js';
import { getPaystub, listPaystubs } from '../../shared/use-cases/paystubs.js';
import { submitPayroll } from '../../shared/use-cases/submit-payroll.js';
import { drain, payrollBody, payrollWorld } from '../support/payroll-fixture.js';
import { testSqsClient } from '../support/engines.js';

/** Runs queued processor messages one at a time, and returns as soon as the next one is a `stopBefore` (left queued). */
async function stepUntil(
  world: Awaited<ReturnType<typeof payrollWorld>>,
  stopBefore: ProcessorMessage['kind'],
): Promise<void> {
  const sqs = testSqsClient();
  for (let i = 0; i < 100; i++) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: world.queues.payroll, MaxNumberOfMessages: 1, VisibilityTimeout: 0 }),
    );
    const m = out.Messages?.[0];
    if (!m) continue;
    const message = JSON.parse(m.Body!) as ProcessorMessage;
    if (message.kind === stopBefore) return;
    await processMessage(world.services, message);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: world.queues.payroll, ReceiptHandle: m.ReceiptHandle! }));
  }
  throw new Error(`no ${stopBefore} message`);
}

describe('paystub visibility and queries on the real engines', () => {
  it('hides the paystubs of a run until it completes, then lists and reads them', async () => {
    const world = await payrollWorld(4);
    const orgId = world.org.organization_id;
    const submitted = await submitPayroll(
      { ...world.services, chunkSize: 2 },
      { organizationId: orgId, environment: 'sandbox' },
      payrollBody(world.employeeIds),
      { dryRun: false },
    );
    if (submitted.kind !== 'accepted') throw new Error('expected acceptance');
    const payrollId = submitted.data.payroll_id;

    await stepUntil(world, 'finalize');
    const record = (await world.services.payrolls.get(orgId, payrollId))!;
    expect(record.status).toBe('processing');
    expect(record.chunks_done.size).toBe(2);
    const hidden = await listPaystubs(world.services, orgId, { payrollId }, 50);
    expect(hidden.items).toEqual([]);
    const byDate = await listPaystubs(world.services, orgId, { from: '2026-11-01', to: '2026-11-30' }, 50);
    expect(byDate.items).toEqual([]);

    await processMessage(world.services, { kind: 'finalize', organization_id: orgId, payroll_id: payrollId });
    const shown = await listPaystubs(world.services, orgId, { payrollId }, 50);
    expect(shown.items).toHaveLength(4);
    const { stub, ytd } = await getPaystub(world.services, orgId, shown.items[0]!.paystub_id);
    expect(ytd.net_pay).toBe(stub.net_pay);
    await expect(getPaystub(world.services, 'org_other', stub.paystub_id)).rejects.toThrow('Not found');
  });

  it('finds by date range a paystub whose pay date lies far from its period, thanks to the widened bounds', async () => {
    const world = await payrollWorld(1);
    const orgId = world.org.organization_id;
    // Paid 40 days after the period ended: a query on the period must still find it.
    const body = {
      ...payrollBody(world.employeeIds),
      pay_period_start: '2026-01-01',
      pay_period_end: '2026-01-14',
      pay_date: '2026-02-23',
    };
    const submitted = await submitPayroll(
      { ...world.services, chunkSize: 10 },
      { organizationId: orgId, environment: 'sandbox' },
      body,
      { dryRun: false },
    );
    if (submitted.kind !== 'accepted') throw new Error('expected acceptance');
    await drain(world.services, world.queues.payroll, orgId, submitted.data.payroll_id);
    expect((await world.services.payrolls.get(orgId, submitted.data.payroll_id))!.status).toBe('completed');
    expect(
      (await listPaystubs(world.services, orgId, { from: '2026-01-10', to: '2026-01-12' }, 50)).items,
    ).toHaveLength(1);
    expect(
      (await listPaystubs(world.services, orgId, { from: '2026-01-15', to: '2026-02-28' }, 50)).items,
    ).toHaveLength(0);
    expect(await world.services.paystubs.dateBounds(orgId)).toEqual({ after_start: 53, before_end: 0 });
  });
});
