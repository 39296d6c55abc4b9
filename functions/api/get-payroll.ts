import { NotFoundError } from '../../shared/domain/errors.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { processorServices } from '../../shared/http/processor-services.js';
import { routeById } from '../../shared/http/routes.js';
import { payrollIdParams } from '../../shared/schemas/payroll.js';
import { payrollEmployeeIds } from '../../shared/use-cases/payroll-employee-ids.js';
import { payrollView } from '../../shared/use-cases/payroll-view.js';

export const handler = apiHandler(routeById.getPayroll, { params: payrollIdParams }, async ({ principal, params }) => {
  const s = processorServices();
  const record = await s.payrolls.get(principal.organizationId, params.id);
  if (!record) throw new NotFoundError();
  return ok(payrollView.full(record, [...(await payrollEmployeeIds(s.objects, principal.organizationId, params.id))]));
});
