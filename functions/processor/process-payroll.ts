import { fileSealer } from '../../shared/adapters/file-sealer.js';
import { productionBank } from '../../shared/adapters/bank.js';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { logger } from '../../shared/adapters/logger.js';
import { observe } from '../../shared/adapters/observability.js';
import { defaultObjectStore } from '../../shared/adapters/object-store.js';
import { sandboxBank } from '../../shared/adapters/sandbox-bank.js';
import { Queue, sqsClient } from '../../shared/adapters/queue.js';
import { required } from '../../shared/config/env.js';
import { DisbursementFileRepository } from '../../shared/data/disbursement-file-repository.js';
import { MoneyBackWrites } from '../../shared/data/money-back-writes.js';
import { DisbursementSequenceRepository } from '../../shared/data/disbursement-sequence-repository.js';
import { EmployeeRepository } from '../../shared/data/employee-repository.js';
import { Transactions } from '../../shared/data/item.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import { PaystubRepository } from '../../shared/data/paystub-repository.js';
import { QUEUE_DEFINITIONS } from '../../shared/data/table-definition.js';
import { eventServicesOver } from '../../shared/use-cases/events.js';
import { failOnLastAttempt, processMessage, type ProcessorServices } from '../../shared/use-cases/process-payroll.js';

const table = defaultTable();
/** Exported for the fault-injection tests, which set up and inspect state through the very clients it uses. */
export const services: ProcessorServices = {
  ...eventServicesOver(table),
  payrolls: new PayrollRepository(table),
  employees: new EmployeeRepository(table),
  organizations: new OrganizationRepository(table),
  sequences: new DisbursementSequenceRepository(table),
  paystubs: new PaystubRepository(table),
  objects: defaultObjectStore(),
  queue: new Queue(sqsClient(), required('PAYROLL_QUEUE_URL')),
  // The processor unwraps bank account numbers for the NACHA file, and nothing else.
  encryptor: fieldEncryptor('bank-account'),
  // And seals the file it writes under a key of its own (the disbursement file key).
  files: fileSealer(),
  disbursementFiles: new DisbursementFileRepository(table),
  moneyBackWrites: new MoneyBackWrites(table),
  transactions: new Transactions(table),
  // The bank each run's file goes to, by the run's environment: the sandbox's simulates returns and failures.
  banks: { sandbox: sandboxBank, production: productionBank },
};

const message = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('start'), organization_id: z.string(), payroll_id: z.string() }),
  z.object({
    kind: z.literal('chunk'),
    organization_id: z.string(),
    payroll_id: z.string(),
    chunk: z.number().int().nonnegative(),
  }),
  z.object({ kind: z.literal('finalize'), organization_id: z.string(), payroll_id: z.string() }),
]);

const processor = new BatchProcessor(EventType.SQS);

async function handleRecord(record: SQSRecord): Promise<void> {
  let parsed: z.infer<typeof message>;
  try {
    parsed = message.parse(JSON.parse(record.body));
  } catch {
    // A message that can never be understood is logged and dropped, not retried into the dead-letter queue.
    logger.error('unreadable processor message', { message_id: record.messageId });
    return;
  }
  const context = { payroll_id: parsed.payroll_id, organization_id: parsed.organization_id, kind: parsed.kind };
  try {
    await processMessage(services, parsed);
  } catch (err) {
    const receives = Number(record.attributes.ApproximateReceiveCount ?? '1');
    logger.warn('payroll step failed', { ...context, receives, error: err as Error });
    const reason = await failOnLastAttempt(services, parsed, err as Error, {
      receives,
      maxReceives: QUEUE_DEFINITIONS.payroll.maxReceiveCount,
    });
    if (reason !== undefined) logger.error('payroll failed', { ...context, reason });
    throw err;
  }
}

/**
 * Each record succeeds or fails alone: only failed ones return to the queue (ReportBatchItemFailures). Traced, and
 * the business metrics its steps count (runs completed and failed, paystubs written) published as each batch ends.
 */
export const handler = observe(
  async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(event, handleRecord, processor, { context, throwOnFullBatchFailure: false }),
);
