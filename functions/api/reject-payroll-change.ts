import { NotFoundError, PayrollImmutableError } from '../../shared/domain/errors.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { recordServices } from '../../shared/http/record-services.js';
import { routeById } from '../../shared/http/routes.js';
import { payrollIdParams } from '../../shared/schemas/payroll.js';

/** PUT, PATCH and DELETE of a payroll: an unknown id is 404 like everywhere, a submitted payroll always 409. */
export const handler = apiHandler(
  routeById.updatePayroll,
  { params: payrollIdParams },
  async ({ principal, params }) => {
    if (!(await recordServices().payrolls.get(principal.organizationId, params.id))) throw new NotFoundError();
    throw new PayrollImmutableError();
  },
);
