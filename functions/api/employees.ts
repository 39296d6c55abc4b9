import { systemDeps } from '../../shared/adapters/clock.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { observeApi } from '../../shared/adapters/observability.js';
import { employeeRoutes } from '../../shared/api/employees.js';
import { EmployeeRepository } from '../../shared/data/employee-repository.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { apiRouter } from '../../shared/http/api-handler.js';
import { created, ok } from '../../shared/http/envelope.js';
import { gateOver } from '../../shared/http/gate.js';
import { listPage } from '../../shared/http/pagination.js';
import {
  createEmployee,
  deleteEmployee,
  employeeView,
  updateEmployee,
  type EmployeeServices,
} from '../../shared/use-cases/employees.js';

const table = defaultTable();
const services: EmployeeServices = {
  employees: new EmployeeRepository(table),
  organizations: new OrganizationRepository(table),
  encryptor: fieldEncryptor('bank-account'),
  deps: systemDeps,
};

/** /v1/employees: onboarding, the directory, changes and removal. */
const router = apiRouter(
  employeeRoutes,
  {
    createEmployee: async ({ principal, body }) => {
      const employee = await createEmployee(services, principal.organizationId, body);
      return created(employeeView(employee), `/v1/employees/${employee.employee_id}`, 'Employee created');
    },
    listEmployees: async ({ principal, query }) => {
      const orgId = principal.organizationId;
      const page = await listPage({ orgId, query: 'employees' }, query.page_token, (start) =>
        services.employees.listActive(orgId, query.limit, start),
      );
      return ok({ employees: page.items.map(employeeView), next_page_token: page.next_page_token });
    },
    getEmployee: async ({ principal, params }) =>
      ok(employeeView(await services.employees.getActive(principal.organizationId, params.id))),
    updateEmployee: async ({ principal, params, body }) =>
      ok(employeeView(await updateEmployee(services, principal.organizationId, params.id, body)), 'Employee updated'),
    deleteEmployee: async ({ principal, params }) =>
      ok(employeeView(await deleteEmployee(services, principal.organizationId, params.id)), 'Employee removed'),
  },
  { gate: gateOver(table) },
);

/** Traced, and its business metrics published as each request ends (shared/adapters/observability.ts). */
export const handler = observeApi(router);
