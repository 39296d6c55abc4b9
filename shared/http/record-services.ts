import { Queue, sqsClient } from '../adapters/queue.js';
import { required } from '../config/env.js';
import { EventRepository } from '../data/event-repository.js';
import { PaystubRepository } from '../data/paystub-repository.js';
import { PayrollRepository } from '../data/payroll-repository.js';
import { WebhookRepository } from '../data/webhook-repository.js';
import type { ProcessorServices } from '../use-cases/process-payroll.js';
import { appServices } from './context.js';

/** The repositories over the table: everything of the processor services but the bucket, the queues and the key. */
export type RecordServices = Omit<ProcessorServices, 'objects' | 'queue' | 'webhookQueue' | 'encryptor' | 'sequences'>;

let records: RecordServices | undefined;
let payrollQueue: Queue | undefined;
let webhookQueue: Queue | undefined;

/**
 * For the functions that only read and write records (webhook and event routes, payroll lists, the webhook
 * deliverer): importing this module, rather than processor-services.ts, keeps the KMS client (and the code that
 * would load the S3 client) out of what their cold start loads.
 */
export function recordServices(): RecordServices {
  if (!records) {
    const base = appServices();
    records = {
      payrolls: new PayrollRepository(base.table),
      employees: base.employees,
      organizations: base.organizations,
      paystubs: new PaystubRepository(base.table),
      events: new EventRepository(base.table),
      webhooks: new WebhookRepository(base.table),
      deps: base.deps,
    };
  }
  return records;
}

/** Resolved on first use: a function deployed without the queue has no variable for it. */
export function payrollQueueOf(): Queue {
  payrollQueue ??= new Queue(sqsClient(), required('PAYROLL_QUEUE_URL'));
  return payrollQueue;
}

/** Resolved on first use: a function deployed without the queue has no variable for it. */
export function webhookQueueOf(): Queue {
  webhookQueue ??= new Queue(sqsClient(), required('WEBHOOK_QUEUE_URL'));
  return webhookQueue;
}

/** Records plus the webhook queue: what dispatching events (fan-out, redelivery) takes. */
export function eventServices(): RecordServices & { readonly webhookQueue: Queue } {
  const r = recordServices();
  return {
    ...r,
    get webhookQueue() {
      return webhookQueueOf();
    },
  };
}
