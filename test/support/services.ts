import { systemDeps } from '../../shared/adapters/clock.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { defaultObjectStore } from '../../shared/adapters/object-store.js';
import { Queue, sqsClient } from '../../shared/adapters/queue.js';
import { required } from '../../shared/config/env.js';
import { DisbursementSequenceRepository } from '../../shared/data/disbursement-sequence-repository.js';
import { EmployeeRepository } from '../../shared/data/employee-repository.js';
import { EventRepository } from '../../shared/data/event-repository.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import { PaystubRepository } from '../../shared/data/paystub-repository.js';
import { WebhookRepository } from '../../shared/data/webhook-repository.js';
import type { ProcessorServices } from '../../shared/use-cases/process-payroll.js';

/**
 * What the processor's composition root builds (functions/processor/process-payroll.ts), over the table, bucket and
 * queues the environment names: for tests that set up and inspect the state a worker reads and writes. The
 * object store and the SDK clients are the very instances the worker uses.
 */
export function servicesFromEnvironment(): ProcessorServices {
  const table = defaultTable();
  return {
    payrolls: new PayrollRepository(table),
    employees: new EmployeeRepository(table),
    organizations: new OrganizationRepository(table),
    sequences: new DisbursementSequenceRepository(table),
    paystubs: new PaystubRepository(table),
    events: new EventRepository(table),
    webhooks: new WebhookRepository(table),
    get objects() {
      return defaultObjectStore();
    },
    queue: new Queue(sqsClient(), required('PAYROLL_QUEUE_URL')),
    webhookQueue: new Queue(sqsClient(), required('WEBHOOK_QUEUE_URL')),
    encryptor: fieldEncryptor('bank-account'),
    deps: systemDeps,
  };
}
