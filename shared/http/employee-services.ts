import { fieldEncryptor } from '../adapters/envelope-encryption.js';
import type { EmployeeServices } from '../use-cases/employees.js';
import { appServices } from './context.js';

export function employeeServices(): EmployeeServices {
  const s = appServices();
  return {
    employees: s.employees,
    organizations: s.organizations,
    encryptor: fieldEncryptor('bank-account'),
    deps: s.deps,
  };
}
