import { FileSealer, fileContext, fileSealer } from '../../shared/adapters/file-sealer.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { defaultObjectStore, objectKeys } from '../../shared/adapters/object-store.js';
import { Queue, sqsClient } from '../../shared/adapters/queue.js';
import { observeApi } from '../../shared/adapters/observability.js';
import { payrollRoutes } from '../../shared/api/payroll.js';
import { config, required } from '../../shared/config/env.js';
import { EmployeeRepository } from '../../shared/data/employee-repository.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { type PayrollRecord, PayrollRepository } from '../../shared/data/payroll-repository.js';
import { PaystubRepository } from '../../shared/data/paystub-repository.js';
import {
  DisbursementWithdrawnError,
  NoDisbursementError,
  NotFoundError,
  PayrollImmutableError,
} from '../../shared/domain/errors.js';
import { apiRouter } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { gateOver } from '../../shared/http/gate.js';
import { requireScope } from '../../shared/http/middleware/authenticate.js';
import { listPage } from '../../shared/http/pagination.js';
import type { Principal } from '../../shared/http/principal.js';
import { approvePayroll, payrollBlockers, pendingNetPay } from '../../shared/use-cases/approve-payroll.js';
import { cancelPayroll } from '../../shared/use-cases/cancel-payroll.js';
import { payrollEmployeeIds } from '../../shared/use-cases/payroll-employee-ids.js';
import { payrollView } from '../../shared/use-cases/payroll-view.js';
import { submitPayroll } from '../../shared/use-cases/submit-payroll.js';
import { eventServicesOver } from '../../shared/use-cases/events.js';

const table = defaultTable();
const payrolls = new PayrollRepository(table);
const objects = defaultObjectStore();
const files = fileSealer();
const events = eventServicesOver(table);
const submission = {
  ...events,
  payrolls,
  employees: new EmployeeRepository(table),
  organizations: new OrganizationRepository(table),
  objects,
  queue: new Queue(sqsClient(), required('PAYROLL_QUEUE_URL')),
  chunkSize: config().PAYROLL_CHUNK_SIZE,
};

const cancellation = { ...events, payrolls, paystubs: new PaystubRepository(table), objects };

/**
 * A run's file, opened with the run's own key. Only a file the processor sealed is served: an object written there
 * any other way (unsealed, or sealed under another run's key) fails to open, and is never handed out as the run's.
 */
async function unsealed(record: PayrollRecord, stored: string): Promise<string> {
  if (!FileSealer.isSealed(stored) || !record.file_key)
    throw new Error(`The stored file of ${record.payroll_id} is not sealed under the run's key`);
  return files.open(stored, record.file_key, fileContext(record.organization_id, record.payroll_id));
}

const FILE_SCOPE = payrollRoutes.getDisbursement.success[0].alternatives['text/plain'].scope.scope;

/** PUT, PATCH and DELETE of a payroll: an unknown id is 404 like everywhere, a submitted payroll always 409. */
const immutable = async ({ principal, params }: { principal: Principal; params: { id: string } }): Promise<never> => {
  if (!(await payrolls.get(principal.organizationId, params.id))) throw new NotFoundError();
  throw new PayrollImmutableError();
};

/** /v1/payroll: submission (and dry runs), history, a run with its progress, its NACHA file, sandbox cancel. */
const router = apiRouter(
  payrollRoutes,
  {
    submitPayroll: async ({ principal, body, query, header }) => {
      const caller = {
        organizationId: principal.organizationId,
        environment: principal.environment,
        apiKeyId: principal.apiKeyId,
      };
      const idempotencyKey = header('idempotency-key');
      const outcome = await submitPayroll(submission, caller, body, { dryRun: query.dry_run, idempotencyKey });
      if (outcome.kind === 'dry_run')
        return { status: 200, message: 'Dry run: the payroll is valid and nothing was stored', data: outcome.data };
      return {
        status: 202,
        message: 'Payroll accepted for processing',
        data: outcome.data,
        headers: {
          Location: `/v1/payroll/${outcome.data.payroll_id}`,
          ...(outcome.replayed && { 'Idempotent-Replayed': 'true' }),
        },
      };
    },
    listPayrolls: async ({ principal, query }) => {
      const orgId = principal.organizationId;
      const filters = { status: query.status, from: query.from, to: query.to };
      const page = await listPage({ orgId, query: `payroll:${JSON.stringify(filters)}` }, query.page_token, (start) =>
        payrolls.list(orgId, filters, query.limit, start),
      );
      return ok({ payrolls: page.items.map(payrollView.summary), next_page_token: page.next_page_token });
    },
    getPayroll: async ({ principal, params }) => {
      const record = await payrolls.get(principal.organizationId, params.id);
      if (!record) throw new NotFoundError();
      const ids = await payrollEmployeeIds(objects, principal.organizationId, params.id);
      const approval =
        record.status === 'awaiting_approval'
          ? {
              blockers: await payrollBlockers(submission, record, submission.deps.now()),
              netPay: await pendingNetPay(objects, record),
            }
          : null;
      return ok(payrollView.full(record, [...ids], approval));
    },
    approvePayroll: async ({ principal, params }) => {
      const approver = {
        organizationId: principal.organizationId,
        environment: principal.environment,
        apiKeyId: principal.apiKeyId,
      };
      return ok(payrollView.summary(await approvePayroll(submission, approver, params.id)), 'Payroll approved');
    },
    /** The NACHA file as text/plain, or with `Accept: application/json` its control totals. 404 until it exists. */
    getDisbursement: async ({ principal, params, header }) => {
      const wantsTotals = (header('accept') ?? '').includes('application/json');
      // The file holds full account numbers: its own scope, checked before anything about the run is revealed.
      if (!wantsTotals) requireScope(principal, FILE_SCOPE);
      const record = await payrolls.get(principal.organizationId, params.id);
      if (!record) throw new NotFoundError();
      if (record.status === 'cancelled' || record.status === 'failed')
        throw new DisbursementWithdrawnError(record.status);
      if (record.status === 'rejected') throw new NoDisbursementError();
      if (!record.disbursement) throw new NotFoundError();
      if (wantsTotals) {
        return ok({ payroll_id: record.payroll_id, ...payrollView.disbursementTotals(record)! });
      }
      const stored = await objects.getText(objectKeys.disbursement(principal.organizationId, params.id));
      if (stored === undefined) throw new NotFoundError();
      return {
        status: 200,
        message: 'OK',
        raw: { body: await unsealed(record, stored), contentType: 'text/plain; charset=us-ascii' },
        headers: { 'Content-Disposition': `attachment; filename="${record.payroll_id}.ach"` },
      };
    },
    cancelPayroll: async ({ principal, params }) => {
      const record = await cancelPayroll(
        cancellation,
        config().PAYROLL_ENVIRONMENT,
        principal.organizationId,
        params.id,
      );
      return ok(payrollView.summary(record), 'Payroll cancelled');
    },
    replacePayroll: immutable,
    updatePayroll: immutable,
    deletePayroll: immutable,
  },
  { gate: gateOver(table) },
);

/** Traced, and its business metrics published as each request ends (shared/adapters/observability.ts). */
export const handler = observeApi(router);
