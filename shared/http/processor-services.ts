import { fieldEncryptor } from '../adapters/envelope-encryption.js';
import { defaultObjectStore } from '../adapters/object-store.js';
import { Queue, sqsClient } from '../adapters/queue.js';
import { required } from '../config/env.js';
import { EventRepository } from '../data/event-repository.js';
import { PaystubRepository } from '../data/paystub-repository.js';
import { WebhookRepository } from '../data/webhook-repository.js';
import { PayrollRepository } from '../data/payroll-repository.js';
import type { ProcessorServices } from '../use-cases/process-payroll.js';
import { appServices } from './context.js';

let services: ProcessorServices | undefined;
let queue: Queue | undefined;
let webhookQueue: Queue | undefined;

/**
 * What the processor and the payroll handlers use, built once per container. The bucket, the queue and the
 * encryptor are resolved on first use: a deployed function only has the variables its grants come with (GET
 * /v1/payroll has no queue, submit has no KMS key), so nothing may be read before a use case asks for it.
 */
export function processorServices(): ProcessorServices {
  if (!services) {
    const base = appServices();
    services = {
      payrolls: new PayrollRepository(base.table),
      employees: base.employees,
      organizations: base.organizations,
      paystubs: new PaystubRepository(base.table),
      events: new EventRepository(base.table),
      webhooks: new WebhookRepository(base.table),
      get webhookQueue() {
        webhookQueue ??= new Queue(sqsClient(), required('WEBHOOK_QUEUE_URL'));
        return webhookQueue;
      },
      get objects() {
        return defaultObjectStore();
      },
      get queue() {
        queue ??= new Queue(sqsClient(), required('PAYROLL_QUEUE_URL'));
        return queue;
      },
      get encryptor() {
        // The processor unwraps bank account numbers for the NACHA file, and nothing else.
        return fieldEncryptor('bank-account');
      },
      deps: base.deps,
    };
  }
  return services;
}
