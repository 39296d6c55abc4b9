import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { employeeIdParams } from '../../shared/schemas/employee.js';
import { deleteEmployee, employeeView } from '../../shared/use-cases/employees.js';

export const handler = apiHandler(
  routeById.deleteEmployee,
  { params: employeeIdParams },
  async ({ principal, params }) => {
    // Removal touches no bank data, so it needs no encryptor (nor, deployed, a KMS grant).
    const removed = await deleteEmployee(appServices(), principal.organizationId, params.id);
    return ok(employeeView(removed), 'Employee removed');
  },
);
