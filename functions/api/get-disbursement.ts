import { objectKeys } from '../../shared/adapters/object-store.js';
import { NotFoundError } from '../../shared/domain/errors.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { processorServices } from '../../shared/http/processor-services.js';
import { routeById } from '../../shared/http/routes.js';
import { payrollIdParams } from '../../shared/schemas/payroll.js';
import { payrollView } from '../../shared/use-cases/payroll-view.js';

/** The NACHA file as text/plain, or with `Accept: application/json` its control totals. 404 until it exists. */
export const handler = apiHandler(
  routeById.getDisbursement,
  { params: payrollIdParams },
  async ({ principal, params, header }) => {
    const s = processorServices();
    const record = await s.payrolls.get(principal.organizationId, params.id);
    if (!record?.disbursement) throw new NotFoundError();
    if ((header('accept') ?? '').includes('application/json')) {
      return ok({ payroll_id: record.payroll_id, ...payrollView.disbursementTotals(record)! });
    }
    const content = await s.objects.getText(objectKeys.disbursement(principal.organizationId, params.id));
    if (content === undefined) throw new NotFoundError();
    return {
      status: 200,
      message: 'OK',
      raw: { body: content, contentType: 'text/plain; charset=us-ascii' },
      headers: { 'Content-Disposition': `attachment; filename="${record.payroll_id}.ach"` },
    };
  },
);
