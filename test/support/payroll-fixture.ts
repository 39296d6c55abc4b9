import { objectKeys } from '../../shared/adapters/object-store.js';
import { FileSealer, fileContext } from '../../shared/adapters/file-sealer.js';
import { randomBytes } from 'node:crypto';
import { DeleteMessageCommand, ChangeMessageVisibilityCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { systemDeps } from '../../shared/adapters/clock.js';
import { FieldEncryptor, LocalDataKeyProvider } from '../../shared/adapters/envelope-encryption.js';
import { ObjectStore } from '../../shared/adapters/object-store.js';
import { Queue } from '../../shared/adapters/queue.js';
import { EmployeeRepository } from '../../shared/data/employee-repository.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { EventRepository } from '../../shared/data/event-repository.js';
import { type PaystubRecord, PaystubRepository } from '../../shared/data/paystub-repository.js';
import { WebhookRepository } from '../../shared/data/webhook-repository.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import { isTerminal } from '../../shared/domain/payroll-status.js';
import { createOrganization } from '../../shared/use-cases/api-keys.js';
import { createEmployee } from '../../shared/use-cases/employees.js';
import {
  processMessage,
  type ProcessorMessage,
  type ProcessorServices,
} from '../../shared/use-cases/process-payroll.js';
import { DisbursementFileRepository } from '../../shared/data/disbursement-file-repository.js';
import { MoneyBackWrites } from '../../shared/data/money-back-writes.js';
import { DisbursementSequenceRepository } from '../../shared/data/disbursement-sequence-repository.js';
import { Transactions } from '../../shared/data/item.js';
import { createTestBucket, createTestQueues, createTestTable, testS3Client, testSqsClient } from './engines.js';
import { submitPayroll } from '../../shared/use-cases/submit-payroll.js';

/** A whole payroll world on the real engines: its own table, queues and bucket, an organization and employees. */
export async function payrollWorld(employeeCount: number, options: { accountNumber?: (i: number) => string } = {}) {
  const [table, queues, bucket] = await Promise.all([createTestTable(), createTestQueues(), createTestBucket()]);
  const organizations = new OrganizationRepository(table);
  const org = await createOrganization(organizations, systemDeps, { name: 'Pipeline Co', environment: 'sandbox' });
  const services: ProcessorServices = {
    payrolls: new PayrollRepository(table),
    employees: new EmployeeRepository(table),
    organizations,
    sequences: new DisbursementSequenceRepository(table),
    paystubs: new PaystubRepository(table),
    events: new EventRepository(table),
    webhooks: new WebhookRepository(table),
    webhookQueue: new Queue(testSqsClient(), queues.webhooks),
    objects: new ObjectStore(testS3Client(), bucket),
    queue: new Queue(testSqsClient(), queues.payroll),
    encryptor: new FieldEncryptor(new LocalDataKeyProvider(randomBytes(32).toString('base64'))),
    files: new FileSealer(new LocalDataKeyProvider(randomBytes(32).toString('base64'))),
    disbursementFiles: new DisbursementFileRepository(table),
    moneyBackWrites: new MoneyBackWrites(table),
    transactions: new Transactions(table),
    deps: systemDeps,
  };
  const employeeIds: string[] = [];
  for (let i = 0; i < employeeCount; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, employeeCount - i) }, (_, j) =>
        createEmployee(services, org.organization_id, {
          first_name: 'Worker',
          last_name: `No ${i + j}`,
          email: `worker${i + j}@example.com`,
          employment_type: 'full_time',
          pay_group: 'default',
          pay_schedule: 'biweekly',
          start_date: '2026-01-05',
          bank_account: {
            account_number: options.accountNumber?.(i + j) ?? String(10_000_000 + i + j),
            routing_number: '021000021',
            account_type: (i + j) % 2 ? 'savings' : 'checking',
          },
        }),
      ),
    );
    employeeIds.push(...batch.map((e) => e.employee_id));
  }
  return { table, queues, bucket, org, services, employeeIds };
}

export function payrollBody(employeeIds: string[], extra: Record<string, unknown> = {}) {
  return {
    pay_period_start: '2026-11-01',
    pay_period_end: '2026-11-14',
    pay_date: '2026-11-20',
    employees: employeeIds.map((id, i) => ({
      employee_id: id,
      gross_pay: (2000 + i).toFixed(2),
      hours_worked: 80,
      bonuses: i % 3 === 0 ? '50.25' : 0,
      deductions: { taxes: (400 + (i % 7)).toFixed(2), benefits: 85.5 },
    })),
    ...extra,
  };
}

/** Submits a run (not a dry run) in chunks of `chunkSize`; its id. Throws unless it was accepted. */
export async function submitRun(
  world: Pick<Awaited<ReturnType<typeof payrollWorld>>, 'services' | 'org'>,
  body: ReturnType<typeof payrollBody>,
  chunkSize: number,
): Promise<string> {
  const outcome = await submitPayroll(
    { ...world.services, chunkSize },
    { organizationId: world.org.organization_id, environment: 'sandbox' },
    body,
    { dryRun: false },
  );
  if (outcome.kind !== 'accepted') throw new Error(`expected acceptance, got ${JSON.stringify(outcome)}`);
  return outcome.data.payroll_id;
}

/**
 * Plays the SQS event source over the real queue: receives, runs each message through the processor in parallel,
 * deletes what succeeded and makes what failed visible again at once (a re-delivery), until the run is finished
 * and the queue is empty. Returns the number of failed deliveries.
 */
export async function drain(
  services: ProcessorServices,
  queueUrl: string,
  orgId: string,
  payrollId: string,
  run = processMessage,
): Promise<number> {
  const sqs = testSqsClient();
  let failures = 0;
  let emptyPolls = 0;
  for (let round = 0; round < 500; round++) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 30,
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) {
      const record = await services.payrolls.get(orgId, payrollId);
      if (record && isTerminal(record.status) && ++emptyPolls >= 2) return failures;
      continue;
    }
    emptyPolls = 0;
    await Promise.all(
      messages.map(async (m) => {
        try {
          await run(services, JSON.parse(m.Body!) as ProcessorMessage);
          await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle! }));
        } catch (err) {
          // A failure is a re-delivery here, counted but silent: DRAIN_DEBUG=1 shows why a step failed.
          if (process.env.DRAIN_DEBUG) console.error(err);
          failures++;
          await sqs.send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: queueUrl,
              ReceiptHandle: m.ReceiptHandle!,
              VisibilityTimeout: 0,
            }),
          );
        }
      }),
    );
  }
  throw new Error('the run did not finish within 500 rounds');
}

/**
 * Every paystub item of a run in the table, found by scanning it: the ground truth a test compares the service's
 * answers with, independent of how the service finds a run's paystubs.
 */
export async function paystubItemsOf(
  table: { doc: { send: (c: ScanCommand) => Promise<ScanCommandOutput> }; tableName: string },
  payrollId: string,
): Promise<PaystubRecord[]> {
  const out: PaystubRecord[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await table.doc.send(
      new ScanCommand({
        TableName: table.tableName,
        FilterExpression: 'entity = :paystub AND payroll_id = :payroll',
        ExpressionAttributeValues: { ':paystub': 'paystub', ':payroll': payrollId },
        ExclusiveStartKey: start,
      }),
    );
    out.push(...((page.Items ?? []) as PaystubRecord[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/**
 * A run's NACHA file as the API serves it: the stored object opened with the run's own key (files are sealed at rest,
 * shared/adapters/file-sealer.ts). Undefined when there is no object; throws when the run's key is gone.
 */
export async function runFile(
  services: Pick<ProcessorServices, 'objects' | 'payrolls' | 'files'>,
  orgId: string,
  payrollId: string,
): Promise<string | undefined> {
  const stored = await services.objects.getText(objectKeys.disbursement(orgId, payrollId));
  if (stored === undefined) return undefined;
  const record = await services.payrolls.get(orgId, payrollId);
  if (!record?.file_key) throw new Error(`Payroll ${payrollId} has a file but no key to open it`);
  return services.files.open(stored, record.file_key, fileContext(orgId, payrollId));
}
