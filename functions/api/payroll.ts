import { FileSealer, fileContext, fileSealer } from '../../shared/adapters/file-sealer.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { defaultObjectStore, objectKeys } from '../../shared/adapters/object-store.js';
import { Queue, sqsClient } from '../../shared/adapters/queue.js';
import { observeApi } from '../../shared/adapters/observability.js';
import { disbursementFileRoutes } from '../../shared/api/disbursement-files.js';
import { moneyBackRoutes } from '../../shared/api/money-back.js';
import { payrollRoutes } from '../../shared/api/payroll.js';
import { config, required } from '../../shared/config/env.js';
import { DisbursementFileRepository } from '../../shared/data/disbursement-file-repository.js';
import { DisbursementSequenceRepository } from '../../shared/data/disbursement-sequence-repository.js';
import { EmployeeRepository } from '../../shared/data/employee-repository.js';
import { Transactions } from '../../shared/data/item.js';
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
import { disbursementFileView } from '../../shared/use-cases/disbursement-files.js';
import { openListedFile } from '../../shared/use-cases/money-back/file-store.js';
import { redebitFunding, resolveFunding } from '../../shared/use-cases/money-back/funding.js';
import { reversePayments } from '../../shared/use-cases/money-back/reversals.js';
import type { MoneyBackServices } from '../../shared/use-cases/money-back/services.js';
import { fundingView, payrollView } from '../../shared/use-cases/payroll-view.js';
import { reversalWindowEnds } from '../../shared/domain/money-back.js';
import { centsToNumber } from '../../shared/domain/money.js';
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

const paystubs = new PaystubRepository(table);
const cancellation = { ...events, payrolls, paystubs, objects };
const disbursementFiles = new DisbursementFileRepository(table);
const moneyBack: MoneyBackServices = {
  ...events,
  payrolls,
  paystubs,
  organizations: submission.organizations,
  sequences: new DisbursementSequenceRepository(table),
  disbursementFiles,
  objects,
  files,
  transactions: new Transactions(table),
};

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

/**
 * /v1/payroll: submission (and dry runs), history, a run with its progress, its NACHA file, approval, cancel; money
 * back (re-debits, resolutions, reversals); /v1/disbursement-files: every file written.
 */
const router = apiRouter(
  { ...payrollRoutes, ...moneyBackRoutes, ...disbursementFileRoutes },
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
    redebitFunding: async ({ principal, params }) => {
      const run = await redebitFunding(moneyBack, principal.organizationId, params.id);
      return ok({ payroll_id: run.payroll_id, funding: fundingView(run.funding)! }, 'Funding re-debited');
    },
    resolveFunding: async ({ principal, params, body }) => {
      const run = await resolveFunding(moneyBack, principal.organizationId, params.id, body);
      return ok({ payroll_id: run.payroll_id, funding: fundingView(run.funding)! }, 'Funding resolved');
    },
    reversePayments: async ({ principal, params, body, header }) => {
      const outcome = await reversePayments(
        moneyBack,
        principal.organizationId,
        params.id,
        body,
        header('idempotency-key'),
      );
      const payments = outcome.payments.map((p) => ({
        paystub_id: p.paystub_id,
        employee_id: p.employee_id,
        amount: centsToNumber(p.net_pay),
        trace_number: p.payment.trace_number!,
        reversal_trace_number: p.payment.reversal!.trace_number,
        reason: body.reason,
        effective_entry_date: p.payment.reversal!.effective_entry_date,
        window_ends: reversalWindowEnds(p.payment.effective_entry_date ?? p.pay_date),
        status: p.payment.status as 'reversal_scheduled' | 'reversal_returned',
        scheduled_at: p.payment.reversal!.scheduled_at,
      }));
      return {
        status: 201,
        message: 'Payments reversed',
        data: { file: disbursementFileView(outcome.file), payments },
        headers: {
          Location: `/v1/disbursement-files/${outcome.file.file_id}`,
          ...(outcome.replayed && { 'Idempotent-Replayed': 'true' }),
        },
      };
    },
    listDisbursementFiles: async ({ principal, query }) => {
      const orgId = principal.organizationId;
      const filters = { type: query.type, payrollId: query.payroll_id, from: query.from, to: query.to };
      const page = await listPage({ orgId, query: `files:${JSON.stringify(filters)}` }, query.page_token, (start) =>
        disbursementFiles.list(orgId, filters, query.limit, start),
      );
      return ok({ files: page.items.map(disbursementFileView), next_page_token: page.next_page_token });
    },
    getDisbursementFile: async ({ principal, params, header }) => {
      const wantsTotals = (header('accept') ?? '').includes('application/json');
      // The file holds full account numbers: its own scope, checked before anything about the file is revealed.
      if (!wantsTotals) requireScope(principal, FILE_SCOPE);
      const file = await disbursementFiles.get(principal.organizationId, params.id);
      if (!file) throw new NotFoundError();
      if (wantsTotals) return ok(disbursementFileView(file));
      return {
        status: 200,
        message: 'OK',
        raw: { body: await openListedFile(moneyBack, file), contentType: 'text/plain; charset=us-ascii' },
        headers: { 'Content-Disposition': `attachment; filename="${file.file_id}.ach"` },
      };
    },
    replacePayroll: immutable,
    updatePayroll: immutable,
    deletePayroll: immutable,
  },
  { gate: gateOver(table) },
);

/** Traced, and its business metrics published as each request ends (shared/adapters/observability.ts). */
export const handler = observeApi(router);
