import { defaultTable, type TableRef } from '../adapters/dynamo.js';
import { systemDeps, type Deps } from '../adapters/clock.js';
import { config } from '../config/env.js';
import { ApiKeyRepository } from '../data/api-key-repository.js';
import { EmployeeRepository } from '../data/employee-repository.js';
import { OrganizationRepository } from '../data/organization-repository.js';
import { RateLimitRepository } from '../data/rate-limit-repository.js';
import { RateLimiter } from './rate-limiter.js';
import { Authenticator } from './authenticator.js';

/**
 * The composition root of the API handlers: clients, repositories and the authenticator are built once per
 * container, on first use, so a handler that never touches one never pays for it.
 */
export interface Services {
  table: TableRef;
  deps: Deps;
  organizations: OrganizationRepository;
  apiKeys: ApiKeyRepository;
  employees: EmployeeRepository;
  rateLimits: RateLimiter;
}

let services: Services | undefined;
let auth: Authenticator | undefined;

export function appServices(): Services {
  if (!services) {
    const table = defaultTable();
    services = {
      table,
      deps: systemDeps,
      organizations: new OrganizationRepository(table),
      apiKeys: new ApiKeyRepository(table),
      employees: new EmployeeRepository(table),
      rateLimits: new RateLimiter(new RateLimitRepository(table)),
    };
  }
  return services;
}

export function authenticator(): Authenticator {
  auth ??= new Authenticator(appServices().apiKeys, config().PAYROLL_ENVIRONMENT, config().PAYROLL_AUTH_CACHE_TTL_MS);
  return auth;
}
