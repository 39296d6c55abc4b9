import { config } from '../../shared/config/env.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { processorServices } from '../../shared/http/processor-services.js';
import { routeById } from '../../shared/http/routes.js';
import { payrollIdParams } from '../../shared/schemas/payroll.js';
import { cancelPayroll } from '../../shared/use-cases/cancel-payroll.js';
import { payrollView } from '../../shared/use-cases/payroll-view.js';

export const handler = apiHandler(
  routeById.cancelPayroll,
  { params: payrollIdParams },
  async ({ principal, params }) => {
    const record = await cancelPayroll(
      processorServices(),
      config().PAYROLL_ENVIRONMENT,
      principal.organizationId,
      params.id,
    );
    return ok(payrollView.summary(record), 'Payroll cancelled');
  },
);
