import type { TableRef } from '../shared/adapters/dynamo.js';
import { batchGetAll, batchPutAll } from '../shared/data/batch.js';
import { keys } from '../shared/data/keys.js';
import type { RunningStack } from '../test/support/local-stack.js';
import { payrollBodyFor as body, seedClients as clients, seedEmployees } from '../test/support/seed.js';
import { ms, peakRssMiB, progress, timed } from './machine.js';

export interface PayrollBenchResult {
  employees: number;
  to202Ms: number;
  toCompletedMs: number;
  itemsPerSecond: number;
  directWriteMs: number;
  directReadPlusBodyMs: number;
  peakRssMiB: number | undefined;
}

/** Paystub-shaped items of the same size, written by the engine alone with the same batching: the storage bound. */
async function directPaystubWrite(table: TableRef, count: number): Promise<number> {
  const items = Array.from({ length: count }, (_, i) => {
    const id = `stub_bench${String(i).padStart(21, '0')}`;
    return {
      PK: `STUB#${id}`,
      SK: 'STUB',
      entity: 'bench',
      GSI1PK: 'PAYROLL#bench',
      GSI1SK: id,
      GSI2PK: `EMP#emp_bench${i}`,
      GSI2SK: `2026-11-20#${id}`,
      paystub_id: id,
      organization_id: 'org_bench',
      employee_id: `emp_bench${i}`,
      payroll_id: 'pay_bench',
      employee_name: `Bench Worker ${i}`,
      period_start: '2026-11-01',
      period_end: '2026-11-14',
      pay_date: '2026-11-20',
      issued_date: '2026-11-21',
      hours_worked_hundredths: 8000,
      gross_pay: 200000,
      bonuses: 0,
      deductions: { taxes: 41237, benefits: 8800, retirement: 6000 },
      deductions_total: 56037,
      net_pay: 143963,
      notes: null,
      payment: {
        method: 'direct_deposit',
        account_type: 'checking',
        account_number_last4: '1234',
        routing_number: '021000021',
        trace_number: '021000020000001',
        status: 'scheduled',
      },
      status: 'issued',
      created_at: '2026-11-21T00:00:00.000Z',
    };
  });
  return (await timed(() => batchPutAll(table, items))).ms;
}

export async function benchPayroll(
  stack: RunningStack,
  token: string,
  orgId: string,
  employees: number,
  period: number,
  processorPid: number,
): Promise<PayrollBenchResult> {
  const { table, objects } = clients(stack);
  progress(`payroll ${employees}: seeding employees`);
  const ids = await seedEmployees(stack, table, orgId, employees);
  const payload = body(ids, period);
  const text = JSON.stringify(payload);

  progress(`payroll ${employees}: storage bounds (direct batched read + body write, direct paystub write)`);
  const directReadPlusBodyMs = (
    await timed(async () => {
      await batchGetAll(
        table,
        ids.map((id) => keys.employee(orgId, id)),
      );
      await objects.putText(`bench/${employees}.json`, text);
    })
  ).ms;
  const directWriteMs = await directPaystubWrite(table, employees);

  progress(`payroll ${employees}: POST /v1/payroll (${(text.length / 2 ** 20).toFixed(1)} MiB)`);
  const started = performance.now();
  const res = await stack.request('POST', '/v1/payroll', { token, body: text, validate: false });
  const to202Ms = performance.now() - started;
  if (res.status !== 202) throw new Error(`submission answered ${res.status}: ${res.text.slice(0, 500)}`);
  const payrollId = res.body.data.payroll_id as string;
  let last = '';
  for (;;) {
    const got = await stack.request('GET', `/v1/payroll/${payrollId}`, { token, validate: false });
    const { status, progress: p } = got.body.data;
    const line = `${status} ${p.done}/${p.total}`;
    if (line !== last) progress(`payroll ${employees}: ${line} after ${ms(performance.now() - started)}`);
    last = line;
    if (status === 'completed') break;
    if (status !== 'pending' && status !== 'processing')
      throw new Error(
        `payroll ended ${status}: ${JSON.stringify(got.body.data.findings ?? got.body.data.failure_reason)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
  const toCompletedMs = performance.now() - started;
  return {
    employees,
    to202Ms,
    toCompletedMs,
    itemsPerSecond: employees / (toCompletedMs / 1000),
    directWriteMs,
    directReadPlusBodyMs,
    peakRssMiB: await peakRssMiB(processorPid),
  };
}
