import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { defaultObjectStore } from '../../shared/adapters/object-store.js';
import { observeApi } from '../../shared/adapters/observability.js';
import { disbursementReturnRoutes } from '../../shared/api/disbursement-returns.js';
import { DisbursementFileRepository } from '../../shared/data/disbursement-file-repository.js';
import { MoneyBackWrites } from '../../shared/data/money-back-writes.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { DisbursementSequenceRepository } from '../../shared/data/disbursement-sequence-repository.js';
import { EmployeeRepository } from '../../shared/data/employee-repository.js';
import { Transactions } from '../../shared/data/item.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import { PaystubRepository } from '../../shared/data/paystub-repository.js';
import { apiRouter } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { gateOver } from '../../shared/http/gate.js';
import { applyBankReport, readBankReport, type ReturnServices } from '../../shared/use-cases/disbursement-returns.js';
import { eventServicesOver } from '../../shared/use-cases/events.js';

const table = defaultTable();
/** Exported for the tests, which set up and inspect state through the very clients it uses. */
export const services: ReturnServices = {
  ...eventServicesOver(table),
  payrolls: new PayrollRepository(table),
  paystubs: new PaystubRepository(table),
  employees: new EmployeeRepository(table),
  sequences: new DisbursementSequenceRepository(table),
  organizations: new OrganizationRepository(table),
  disbursementFiles: new DisbursementFileRepository(table),
  moneyBackWrites: new MoneyBackWrites(table),
  objects: defaultObjectStore(),
  // Wraps a corrected account number; never unwraps one.
  encryptor: fieldEncryptor('bank-account'),
  transactions: new Transactions(table),
};

/** /v1/disbursement-returns: what the bank sent back about released files, applied to the payments. */
const router = apiRouter(
  disbursementReturnRoutes,
  {
    postDisbursementReturns: async ({ principal, body }) => {
      const outcomes = await applyBankReport(services, principal.organizationId, readBankReport(body));
      return ok({ outcomes }, 'Report applied');
    },
  },
  { gate: gateOver(table) },
);

/** Traced, and its business metrics published as each request ends (shared/adapters/observability.ts). */
export const handler = observeApi(router);
