import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fileSealer } from '../../shared/adapters/file-sealer.js';
import { defaultObjectStore } from '../../shared/adapters/object-store.js';
import { observeApi } from '../../shared/adapters/observability.js';
import { disbursementFileRoutes } from '../../shared/api/disbursement-files.js';
import { moneyBackRoutes } from '../../shared/api/money-back.js';
import { DisbursementFileRepository } from '../../shared/data/disbursement-file-repository.js';
import { MoneyBackWrites } from '../../shared/data/money-back-writes.js';
import { DisbursementSequenceRepository } from '../../shared/data/disbursement-sequence-repository.js';
import { Transactions } from '../../shared/data/item.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import { PaystubRepository } from '../../shared/data/paystub-repository.js';
import { NotFoundError } from '../../shared/domain/errors.js';
import { centsToNumber } from '../../shared/domain/money.js';
import { reversalWindowEnds } from '../../shared/domain/money-back.js';
import { apiRouter } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { gateOver } from '../../shared/http/gate.js';
import { requireScope } from '../../shared/http/middleware/authenticate.js';
import { listPage } from '../../shared/http/pagination.js';
import { disbursementFileView } from '../../shared/use-cases/disbursement-files.js';
import { eventServicesOver } from '../../shared/use-cases/events.js';
import { openListedFile } from '../../shared/use-cases/money-back/file-store.js';
import { redebitFunding, resolveFunding } from '../../shared/use-cases/money-back/funding.js';
import { reversePayments } from '../../shared/use-cases/money-back/reversals.js';
import type { MoneyBackServices } from '../../shared/use-cases/money-back/services.js';
import { fundingView } from '../../shared/use-cases/payroll-view.js';

const table = defaultTable();
const disbursementFiles = new DisbursementFileRepository(table);
const services: MoneyBackServices = {
  ...eventServicesOver(table),
  payrolls: new PayrollRepository(table),
  paystubs: new PaystubRepository(table),
  organizations: new OrganizationRepository(table),
  sequences: new DisbursementSequenceRepository(table),
  disbursementFiles,
  moneyBackWrites: new MoneyBackWrites(table),
  objects: defaultObjectStore(),
  files: fileSealer(),
  transactions: new Transactions(table),
};

const FILE_SCOPE = disbursementFileRoutes.getDisbursementFile.success[0].alternatives['text/plain'].scope.scope;

/**
 * /v1/disbursement-files: every NACHA file written; and money back on a run: re-debits and resolutions of its
 * funding, reversals of its payments. Its own function: the only API role that may seal a file (besides reading one),
 * and what it loads stays out of the cold start of submissions.
 */
const router = apiRouter(
  { ...moneyBackRoutes, ...disbursementFileRoutes },
  {
    redebitFunding: async ({ principal, params }) => {
      const run = await redebitFunding(services, principal.organizationId, params.id);
      return ok({ payroll_id: run.payroll_id, funding: fundingView(run.funding)! }, 'Funding re-debited');
    },
    resolveFunding: async ({ principal, params, body }) => {
      const run = await resolveFunding(services, principal.organizationId, params.id, body);
      return ok({ payroll_id: run.payroll_id, funding: fundingView(run.funding)! }, 'Funding resolved');
    },
    reversePayments: async ({ principal, params, body, header }) => {
      const outcome = await reversePayments(
        services,
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
    /** The file as text/plain, or with `Accept: application/json` what the list shows of it. */
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
        raw: { body: await openListedFile(services, file), contentType: 'text/plain; charset=us-ascii' },
        headers: { 'Content-Disposition': `attachment; filename="${file.file_id}.ach"` },
      };
    },
  },
  { gate: gateOver(table) },
);

/** Traced, and its business metrics published as each request ends (shared/adapters/observability.ts). */
export const handler = observeApi(router);
