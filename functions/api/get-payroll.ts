import { objectKeys } from '../../shared/adapters/object-store.js';
import { NotFoundError } from '../../shared/domain/errors.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { processorServices } from '../../shared/http/processor-services.js';
import { routeById } from '../../shared/http/routes.js';
import { payrollIdParams } from '../../shared/schemas/payroll.js';
import { payrollView } from '../../shared/use-cases/payroll-view.js';
import type { StoredSubmission } from '../../shared/use-cases/submit-payroll.js';

export const handler = apiHandler(routeById.getPayroll, { params: payrollIdParams }, async ({ principal, params }) => {
  const s = processorServices();
  const record = await s.payrolls.get(principal.organizationId, params.id);
  if (!record) throw new NotFoundError();
  const stored = await s.objects.getJson<StoredSubmission>(objectKeys.submission(principal.organizationId, params.id));
  return ok(payrollView.full(record, stored?.employees.map((e) => e.employee_id) ?? []));
});
