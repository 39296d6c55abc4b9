import type { Context } from 'aws-lambda';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { fileSealer } from '../../shared/adapters/file-sealer.js';
import { logger } from '../../shared/adapters/logger.js';
import { defaultObjectStore } from '../../shared/adapters/object-store.js';
import { observe } from '../../shared/adapters/observability.js';
import { bankTransport } from '../../shared/adapters/bank-transport.js';
import { BankLinkRepository } from '../../shared/data/bank-link-repository.js';
import { DisbursementFileRepository } from '../../shared/data/disbursement-file-repository.js';
import { DisbursementSequenceRepository } from '../../shared/data/disbursement-sequence-repository.js';
import { EmployeeRepository } from '../../shared/data/employee-repository.js';
import { Transactions } from '../../shared/data/item.js';
import { MoneyBackWrites } from '../../shared/data/money-back-writes.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import { PaystubRepository } from '../../shared/data/paystub-repository.js';
import { withinBudget } from '../../shared/use-cases/bank-link/pass-budget.js';
import { type BankLinkServices, serveBankLink } from '../../shared/use-cases/bank-link/serve-bank-link.js';
import { eventServicesOver } from '../../shared/use-cases/events.js';

const table = defaultTable();
const bankLinks = new BankLinkRepository(table);
/** Exported for the local stack, which keeps its sandbox links pointed at its bank. */
export const organizations = new OrganizationRepository(table);
/** Exported for the local stack, which runs the same passes on a timer against its sandbox bank. */
export const services: BankLinkServices = {
  ...eventServicesOver(table),
  payrolls: new PayrollRepository(table),
  paystubs: new PaystubRepository(table),
  employees: new EmployeeRepository(table),
  organizations,
  sequences: new DisbursementSequenceRepository(table),
  disbursementFiles: new DisbursementFileRepository(table),
  moneyBackWrites: new MoneyBackWrites(table),
  objects: defaultObjectStore(),
  files: fileSealer(),
  // Unwraps the link's password or key; wraps a corrected account number a bank's change notice carries.
  encryptor: fieldEncryptor('bank-account'),
  transactions: new Transactions(table),
  bankLinks,
  connect: bankTransport(bankLinks.connectorStore()),
};

/** Organizations served at once: each pass is one SFTP session. */
const PARALLEL = 4;

export interface ServedOrganization {
  organization_id: string;
  sent: number;
  picked_up: number;
  late: number;
  failure?: string;
}

/**
 * One pass for every organization with a bank link (or those of `only`): deliver ready files, pick up the bank's
 * acknowledgements and return files, raise late files. A pass that fails is recorded on the link's status and tried
 * again at the next run; nothing it did is lost (each step is idempotent).
 */
export async function serveLinkedOrganizations(
  options: { only?: ReadonlySet<string>; remainingMs?: () => number } = {},
): Promise<ServedOrganization[]> {
  // A few organizations (the local stack's quick passes): their own settings, not every linked organization's.
  const linked =
    options.only === undefined
      ? await services.bankLinks.withBankLinks()
      : (
          await Promise.all(
            [...options.only].map(async (organizationId) => ({
              organizationId,
              settings: await organizations.getSettings(organizationId),
            })),
          )
        ).flatMap((o) => (o.settings?.bank_link ? [{ organizationId: o.organizationId, settings: o.settings }] : []));
  const { served: outcomes, deferred } = await withinBudget(
    linked,
    { parallel: PARALLEL, ...(options.remainingMs && { remainingMs: options.remainingMs }) },
    async ({ organizationId, settings }): Promise<ServedOrganization> => {
      const o = await serveBankLink(services, organizationId, settings.bank_link!);
      return {
        organization_id: organizationId,
        sent: o.sent.length + o.foundSent.length,
        picked_up: o.pickedUp.length,
        late: o.late.length,
        ...(o.failure && { failure: o.failure }),
      };
    },
  );
  // More organizations than one invocation holds: the operator's cue to give the worker room, or to fan it out.
  if (deferred.length > 0) logger.warn('bank link passes deferred to the next run', { deferred: deferred.length });
  const failing = outcomes.filter((o) => o.failure);
  if (failing.length > 0) logger.warn('bank link passes failed', { failing });
  return outcomes;
}

/** The bank link, on a schedule: every organization with a link, one pass each. */
export const handler = observe(async (_event: unknown, context: Context) => {
  const outcomes = await serveLinkedOrganizations({ remainingMs: () => context.getRemainingTimeInMillis() });
  return { organizations: outcomes.length, outcomes };
});
