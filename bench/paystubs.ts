import { Agent, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { systemDeps } from '../shared/adapters/clock.js';
import { createDocumentClient, type TableRef } from '../shared/adapters/dynamo.js';
import { newId } from '../shared/adapters/ids.js';
import { GSI2, keys } from '../shared/data/keys.js';
import { PaystubRepository, type PaystubRecord } from '../shared/data/paystub-repository.js';
import { PayrollRepository, type PayrollRecord } from '../shared/data/payroll-repository.js';
import { entryPaystubId, paystubIdOf } from '../shared/data/paystub-repository.js';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { RunningStack } from '../test/support/local-stack.js';
import { runLoad, type LoadResult } from './load.js';
import { progress } from './machine.js';

export interface PaystubBenchResult {
  paystubs: number;
  rows: { query: string; api: LoadResult; engine: LoadResult }[];
}

const iso = (d: Date) => d.toISOString().slice(0, 10);

/** 2,000 employees × 50 biweekly runs = 100,000 paystubs, written in the processor's own item shape. */
async function seed(
  table: TableRef,
  orgId: string,
  employees: number,
  runs: number,
): Promise<{ employeeIds: string[]; payrollIds: string[]; firstPeriod: Date }> {
  const payrolls = new PayrollRepository(table);
  const stubs = new PaystubRepository(table);
  const employeeIds = Array.from({ length: employees }, () => newId('emp'));
  const payrollIds: string[] = [];
  const firstPeriod = new Date(Date.UTC(2024, 0, 1));
  for (let r = 0; r < runs; r++) {
    const start = new Date(firstPeriod.getTime() + r * 14 * 86_400_000);
    const period = {
      pay_period_start: iso(start),
      pay_period_end: iso(new Date(start.getTime() + 13 * 86_400_000)),
      pay_date: iso(new Date(start.getTime() + 18 * 86_400_000)),
    };
    const payrollId = newId('pay');
    payrollIds.push(payrollId);
    const at = new Date().toISOString();
    const record: PayrollRecord = {
      payroll_id: payrollId,
      organization_id: orgId,
      environment: 'sandbox',
      type: 'regular',
      status: 'completed',
      ...period,
      employee_count: employees,
      totals: { gross_pay: 0, bonuses: 0, deductions: 0, net_pay: 0 },
      content_hash: 'bench',
      created_at: at,
      updated_at: at,
      status_history: [{ status: 'completed', at, reason: null }],
      chunk_size: 1000,
      chunk_count: 2,
      chunks_done: new Set(),
      returns_count: 0,
      returns_amount: 0,
      funding: null,
      reversals_count: 0,
      reversals_amount: 0,
      processing_started_at: at,
      findings: [],
      disbursement: null,
      failure_reason: null,
      file_key: null,
      paystubs_voided_at: null,
      submitted_by: null,
      approved_by: null,
      approve_by: null,
      originator: null,
      funding_account: null,
      trace_start: 1,
      file_id_modifier: 'A',
      paystub_naming: 'entry',
    };
    await payrolls.create(record, { window: false, now: systemDeps.now() });
    await stubs.widenDateBounds(orgId, period);
    await stubs.putAll(
      employeeIds.map(
        (employeeId, i): PaystubRecord => ({
          paystub_id: paystubIdOf(record, i, employeeId),
          organization_id: orgId,
          employee_id: employeeId,
          payroll_id: payrollId,
          employee_name: `Bench Worker ${i}`,
          period_start: period.pay_period_start,
          period_end: period.pay_period_end,
          pay_date: period.pay_date,
          issued_date: period.pay_date,
          hours_worked_hundredths: 8000,
          gross_pay: 200_000,
          bonuses: 0,
          deductions: { taxes: 40_000, benefits: 9_000 },
          deductions_total: 49_000,
          net_pay: 151_000,
          notes: null,
          payment: {
            method: 'direct_deposit',
            account_type: 'checking',
            account_number_last4: '1234',
            routing_number: '021000021',
            trace_number: `02100002${String(i + 1).padStart(7, '0')}`,
            status: 'scheduled',
            effective_entry_date: null,
          },
          status: 'issued',
          created_at: at,
        }),
      ),
    );
    if ((r + 1) % 10 === 0) progress(`paystubs: seeded ${(r + 1) * employees} of ${runs * employees}`);
  }
  return { employeeIds, payrollIds, firstPeriod };
}

export async function benchPaystubs(
  stack: RunningStack,
  token: string,
  orgId: string,
  options = { employees: 2000, runs: 50, requests: 1500, concurrency: 32 },
): Promise<PaystubBenchResult> {
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const table: TableRef = {
    doc: createDocumentClient(
      new DynamoDBClient({
        endpoint: stack.state.dynamodb_endpoint,
        region: stack.state.region,
        credentials,
        maxAttempts: 10,
      }),
    ),
    tableName: stack.state.table_name,
  };
  progress(`paystubs: seeding ${options.employees * options.runs} paystubs`);
  const { employeeIds, payrollIds, firstPeriod } = await seed(table, orgId, options.employees, options.runs);
  const agent = new Agent({
    keepAlive: true,
    maxSockets: options.concurrency,
    ca: readFileSync(join(stack.dir, 'tls', 'cert.pem')),
  });
  const get = (path: string) =>
    new Promise<boolean>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          servername: 'localhost',
          port: stack.state.https_port,
          path,
          agent,
          headers: { Authorization: `Bearer ${token}` },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200));
        },
      );
      req.on('error', reject);
      req.end();
    });
  const pick = <T>(list: T[], i: number) => list[(i * 7919) % list.length]!;
  const month = (i: number) => {
    const from = new Date(firstPeriod.getTime() + ((i * 37) % 600) * 86_400_000);
    return { from: iso(from), to: iso(new Date(from.getTime() + 30 * 86_400_000)) };
  };
  const query = (input: Record<string, unknown>) => async () => {
    const out = await table.doc.send(new QueryCommand({ TableName: table.tableName, Limit: 51, ...input }));
    return (out.Items?.length ?? 0) > 0;
  };
  // A run's paystubs are a range of primary keys: the engine's best is a BatchGet of the page's 51 keys.
  const firstOfRun = (payrollId: string) => async () => {
    const Keys = Array.from({ length: 51 }, (_, i) => keys.paystub(entryPaystubId(payrollId, i)));
    const out = await table.doc.send(new BatchGetCommand({ RequestItems: { [table.tableName]: { Keys } } }));
    return (out.Responses?.[table.tableName]?.length ?? 0) > 0;
  };
  const queries = [
    {
      name: 'by employee',
      api: (i: number) => `/v1/paystubs?employee_id=${pick(employeeIds, i)}`,
      engine: (i: number) =>
        query({
          IndexName: GSI2.name,
          KeyConditionExpression: `${GSI2.pk} = :pk`,
          ExpressionAttributeValues: { ':pk': keys.paystubsByEmployee(pick(employeeIds, i)) },
        }),
    },
    {
      name: 'by payroll',
      api: (i: number) => `/v1/paystubs?payroll_id=${pick(payrollIds, i)}`,
      engine: (i: number) => firstOfRun(pick(payrollIds, i)),
    },
    {
      name: 'by date range (30 days)',
      api: (i: number) => `/v1/paystubs?from=${month(i).from}&to=${month(i).to}`,
      engine: (i: number) => firstOfRun(pick(payrollIds, i)),
    },
  ];
  const rows: PaystubBenchResult['rows'] = [];
  for (const q of queries) {
    progress(`paystubs: ${q.name} through the API, ${options.requests} requests at ${options.concurrency} connections`);
    await runLoad(options.concurrency, 200, (i) => get(q.api(i + 10_000))); // warm-up: containers and caches, as a warm Lambda
    const api = await runLoad(options.concurrency, options.requests, (i) => get(q.api(i)));
    progress(`paystubs: ${q.name} on the bare engine`);
    const engine = await runLoad(options.concurrency, options.requests, (i) => q.engine(i)());
    rows.push({ query: q.name, api, engine });
  }
  agent.destroy();
  return { paystubs: options.employees * options.runs, rows };
}
