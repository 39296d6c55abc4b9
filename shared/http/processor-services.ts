import { fieldEncryptor } from '../adapters/envelope-encryption.js';
import { defaultObjectStore } from '../adapters/object-store.js';
import { DisbursementSequenceRepository } from '../data/disbursement-sequence-repository.js';
import type { ProcessorServices } from '../use-cases/process-payroll.js';
import { appServices } from './context.js';
import { payrollQueueOf, recordServices, webhookQueueOf } from './record-services.js';

let services: ProcessorServices | undefined;

/**
 * What the processor and the payroll handlers that touch the bucket use, built once per container. The bucket,
 * the queues and the encryptor are resolved on first use: a deployed function only has the variables its grants
 * come with (GET /v1/payroll has no queue, submit has no KMS key), so nothing may be read before a use case asks
 * for it. Functions that need none of the three take record-services.ts instead, and load none of their clients.
 */
export function processorServices(): ProcessorServices {
  if (!services) {
    services = {
      ...recordServices(),
      sequences: new DisbursementSequenceRepository(appServices().table),
      get webhookQueue() {
        return webhookQueueOf();
      },
      get objects() {
        return defaultObjectStore();
      },
      get queue() {
        return payrollQueueOf();
      },
      get encryptor() {
        // The processor unwraps bank account numbers for the NACHA file, and nothing else.
        return fieldEncryptor('bank-account');
      },
    };
  }
  return services;
}
