import { defaultTable } from '../../shared/adapters/dynamo.js';
import { observeApi } from '../../shared/adapters/observability.js';
import { paystubRoutes } from '../../shared/api/paystubs.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import { PaystubRepository } from '../../shared/data/paystub-repository.js';
import { paystubFileName } from '../../shared/domain/paystub-file.js';
import { apiRouter } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { gateOver } from '../../shared/http/gate.js';
import { listPage } from '../../shared/http/pagination.js';
import { getPaystub, listPaystubs, paystubView, yearToDate } from '../../shared/use-cases/paystubs.js';

const table = defaultTable();
const services = { paystubs: new PaystubRepository(table), payrolls: new PayrollRepository(table) };
const organizations = new OrganizationRepository(table);

/**
 * The PDF renderer (pdf-lib and its font tables, ~600 KB) is imported on the first PDF request: esbuild splits it
 * into a chunk of the function's asset (infra/bundling/options.ts), so the JSON answers, most of this function's
 * traffic, never load or parse it on a cold start.
 */
const pdfRenderer = () => import('../../shared/adapters/paystub-pdf.js');

/** /v1/paystubs: the list by employee, run and dates; one paystub with year-to-date totals, as JSON or PDF. */
const router = apiRouter(
  paystubRoutes,
  {
    listPaystubs: async ({ principal, query }) => {
      const orgId = principal.organizationId;
      const filters = { employeeId: query.employee_id, payrollId: query.payroll_id, from: query.from, to: query.to };
      const page = await listPage({ orgId, query: `paystubs:${JSON.stringify(filters)}` }, query.page_token, (start) =>
        listPaystubs(services, orgId, filters, query.limit, start),
      );
      // Year-to-date on every item: a query per employee-year of the page, in parallel.
      const ytd = await yearToDate(services, orgId, page.items);
      return ok({
        paystubs: page.items.map((p) => paystubView(p, ytd.get(p.paystub_id))),
        next_page_token: page.next_page_token,
      });
    },
    getPaystub: async ({ principal, params, header }) => {
      const { stub, ytd } = await getPaystub(services, principal.organizationId, params.id);
      if (!(header('accept') ?? '').includes('application/pdf')) return ok(paystubView(stub, ytd));
      const organization = await organizations.get(principal.organizationId);
      const { renderPaystubPdf } = await pdfRenderer();
      const pdf = await renderPaystubPdf({
        employer: { name: organization?.name ?? 'Employer' },
        employee: { name: stub.employee_name, employee_id: stub.employee_id },
        paystub_id: stub.paystub_id,
        payroll_id: stub.payroll_id,
        period_start: stub.period_start,
        period_end: stub.period_end,
        pay_date: stub.pay_date,
        issued_date: stub.issued_date,
        status: stub.status,
        hours_worked_hundredths: stub.hours_worked_hundredths,
        gross_pay: stub.gross_pay,
        bonuses: stub.bonuses,
        deductions: stub.deductions,
        deductions_total: stub.deductions_total,
        net_pay: stub.net_pay,
        // The statement's "gross earnings" include bonuses, so its year-to-date gross does too.
        year_to_date: { gross_pay: ytd.gross_pay + ytd.bonuses, net_pay: ytd.net_pay },
        // As the JSON answers it: a stub written before settlement dates were stored still prints its date.
        payment: paystubView(stub).payment,
      });
      return {
        status: 200,
        message: 'OK',
        raw: { body: pdf, contentType: 'application/pdf' },
        headers: { 'Content-Disposition': `inline; filename="${paystubFileName({ paystub_id: stub.paystub_id })}"` },
      };
    },
  },
  { gate: gateOver(table) },
);

/** Traced, and its business metrics published as each request ends (shared/adapters/observability.ts). */
export const handler = observeApi(router);
