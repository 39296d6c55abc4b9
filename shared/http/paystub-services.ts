import { PaystubRepository } from '../data/paystub-repository.js';
import { PayrollRepository } from '../data/payroll-repository.js';
import type { PaystubServices } from '../use-cases/paystubs.js';
import { appServices } from './context.js';

let services: PaystubServices | undefined;

/**
 * The paystub routes read the table only: no bucket, queue or key. Two repositories of their own rather than
 * recordServices(), whose other repositories (events, webhooks) would add about 9 KB to what these functions load.
 */
export function paystubServices(): PaystubServices {
  services ??= {
    paystubs: new PaystubRepository(appServices().table),
    payrolls: new PayrollRepository(appServices().table),
  };
  return services;
}
