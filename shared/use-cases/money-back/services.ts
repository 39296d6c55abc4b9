import type { FileSealer } from '../../adapters/file-sealer.js';
import type { ObjectStore } from '../../adapters/object-store.js';
import type { DisbursementFileRepository } from '../../data/disbursement-file-repository.js';
import type { DisbursementSequenceRepository } from '../../data/disbursement-sequence-repository.js';
import type { Transactions } from '../../data/item.js';
import type { MoneyBackWrites } from '../../data/money-back-writes.js';
import type { OrganizationRepository } from '../../data/organization-repository.js';
import type { PayrollRepository } from '../../data/payroll-repository.js';
import type { PaystubRepository } from '../../data/paystub-repository.js';
import type { EventServices } from '../events.js';

/** What money coming back works with: the runs, their payments and files, the organization's holds. */
export interface MoneyBackServices extends EventServices {
  payrolls: PayrollRepository;
  paystubs: PaystubRepository;
  organizations: Pick<OrganizationRepository, 'getSettings' | 'fundingHolds'>;
  /** The conditional writes of money back, across the run, its payments and the organization's holds. */
  moneyBackWrites: MoneyBackWrites;
  sequences: DisbursementSequenceRepository;
  disbursementFiles: DisbursementFileRepository;
  objects: ObjectStore;
  files: FileSealer;
  transactions: Transactions;
}

/** What applying a bank's return of money-back entries needs: no file is opened or written. */
export type MoneyBackReturnServices = Omit<MoneyBackServices, 'files'>;
