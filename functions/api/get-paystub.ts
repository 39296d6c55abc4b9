import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { paystubServices } from '../../shared/http/paystub-services.js';
import { routeById } from '../../shared/http/routes.js';
import { paystubIdParams } from '../../shared/schemas/paystub.js';
import { getPaystub, paystubView } from '../../shared/use-cases/paystubs.js';

/**
 * JSON by default; with `Accept: application/pdf`, the printable statement an employee keeps.
 *
 * The PDF renderer (pdf-lib and its font tables, ~600 KB) is imported on the first PDF request: esbuild splits it into
 * a chunk of the function's asset (infra/bundling/options.ts), so the JSON answers, most of this route's traffic,
 * never load or parse it on a cold start.
 */
const route = routeById.getPaystub;
const pdfRenderer = () => import('../../shared/adapters/paystub-pdf.js');

export const handler = apiHandler(route, { params: paystubIdParams }, async ({ principal, params, header }) => {
  const { stub, ytd } = await getPaystub(paystubServices(), principal.organizationId, params.id);
  if (!(header('accept') ?? '').includes('application/pdf')) return ok(paystubView(stub, ytd));
  const organization = await appServices().organizations.get(principal.organizationId);
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
    payment: stub.payment,
  });
  return {
    status: 200,
    message: 'OK',
    raw: { body: pdf, contentType: 'application/pdf' },
    headers: { 'Content-Disposition': `inline; filename="paystub-${stub.paystub_id}.pdf"` },
  };
});
