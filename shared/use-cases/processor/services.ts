import type { Bank, Banks } from '../../adapters/bank.js';
import type { FieldEncryptor } from '../../adapters/envelope-encryption.js';
import type { FileSealer } from '../../adapters/file-sealer.js';
import type { NachaEntryInput } from '../../adapters/nacha.js';
import { type ObjectStore, objectKeys } from '../../adapters/object-store.js';
import type { Queue } from '../../adapters/queue.js';
import type { DisbursementFileRepository } from '../../data/disbursement-file-repository.js';
import type { DisbursementSequenceRepository } from '../../data/disbursement-sequence-repository.js';
import type { EmployeeRepository } from '../../data/employee-repository.js';
import type { Transactions } from '../../data/item.js';
import type { MoneyBackWrites } from '../../data/money-back-writes.js';
import type { OrganizationRepository } from '../../data/organization-repository.js';
import type { PayrollRecord, PayrollRepository } from '../../data/payroll-repository.js';
import type { PaystubRepository } from '../../data/paystub-repository.js';
import type { PayrollEntry } from '../../domain/payroll.js';
import type { EventServices } from '../events.js';
import type { StoredSubmission } from '../submit-payroll.js';

export type ProcessorMessage =
  | { kind: 'start'; organization_id: string; payroll_id: string }
  | { kind: 'chunk'; organization_id: string; payroll_id: string; chunk: number }
  | { kind: 'finalize'; organization_id: string; payroll_id: string };

/** The event outbox's services (events, webhooks, webhook queue, deps) and the run's own. */
export interface ProcessorServices extends EventServices {
  payrolls: PayrollRepository;
  employees: EmployeeRepository;
  organizations: OrganizationRepository;
  sequences: DisbursementSequenceRepository;
  /** Every file written is listed (GET /v1/disbursement-files): a run's file is, from the write that finishes it. */
  disbursementFiles: DisbursementFileRepository;
  /** What the sandbox bank's returns of a run's funding debit write (they go through the returns intake). */
  moneyBackWrites: MoneyBackWrites;
  paystubs: PaystubRepository;
  objects: ObjectStore;
  queue: Queue;
  encryptor: FieldEncryptor;
  files: FileSealer;
  transactions: Transactions;
  /** The bank of each environment (shared/adapters/bank.ts); by default production's and the sandbox's simulated one. */
  banks?: Banks;
}

/** What the steps run with: the banks chosen. */
export type EngineServices = ProcessorServices & { banks: Banks };

/** The bank a run's file goes to: the one wired for its environment. */
export function bankOf(s: EngineServices, record: Pick<PayrollRecord, 'environment'>): Bank {
  return s.banks[record.environment];
}

export interface ChunkFile {
  /** Index of the first entry of this chunk in the run: trace sequences are `trace_start + offset + i`. */
  offset: number;
  entries: PayrollEntry[];
}

/**
 * A chunk's NACHA entries between the chunk and finalize steps (objectKeys.chunkEntries): every field of each entry
 * record but the account number, which stays the employee's ciphertext as the chunk read it (an account changed
 * since does not change the file). The same chunk writes the same bytes again.
 */
export interface EntriesFile {
  entries: PendingEntry[];
}
export type PendingEntry = Omit<NachaEntryInput, 'accountNumber'> & { account_number_ciphertext: string };

export async function loadSubmission(s: ProcessorServices, r: PayrollRecord): Promise<StoredSubmission> {
  const stored = await s.objects.getJson<StoredSubmission>(objectKeys.submission(r.organization_id, r.payroll_id));
  if (!stored) throw new Error(`The stored body of payroll ${r.payroll_id} is missing`);
  return stored;
}

/** Messages of one run's steps. */
export const step = {
  chunk: (orgId: string, payrollId: string, chunk: number): ProcessorMessage => ({
    kind: 'chunk',
    organization_id: orgId,
    payroll_id: payrollId,
    chunk,
  }),
  finalize: (orgId: string, payrollId: string): ProcessorMessage => ({
    kind: 'finalize',
    organization_id: orgId,
    payroll_id: payrollId,
  }),
};
