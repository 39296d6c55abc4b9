import { apiKeyRoutes } from './api-keys.js';
import { bankLinkRoutes } from './bank-link.js';
import { disbursementFileRoutes } from './disbursement-files.js';
import { disbursementReturnRoutes } from './disbursement-returns.js';
import { docsRoutes } from './docs.js';
import { employeeRoutes } from './employees.js';
import { logRoutes } from './logs.js';
import { moneyBackRoutes } from './money-back.js';
import { payrollRoutes } from './payroll.js';
import { paystubRoutes } from './paystubs.js';
import { type FunctionName, pathMatcher, type RouteDef } from './route.js';

import { settingsRoutes } from './settings.js';
import { webhookRoutes } from './webhooks.js';

/**
 * Every route of the API, in the order the OpenAPI document lists them. The CDK API stack, the local HTTPS server,
 * the OpenAPI document, the authorization matrix tests and the fuzzer all read this list; a function reads only
 * its own resource's declarations.
 */
export const routeById = {
  ...employeeRoutes,
  ...payrollRoutes,
  ...moneyBackRoutes,
  ...disbursementFileRoutes,
  ...disbursementReturnRoutes,
  ...paystubRoutes,
  ...webhookRoutes,
  ...logRoutes,
  ...settingsRoutes,
  ...bankLinkRoutes,
  ...apiKeyRoutes,
  ...docsRoutes,
};
export const ROUTES: readonly RouteDef[] = Object.values(routeById);

/** The functions that serve routes, with the routes each serves. `docs` also answers what no route claims. */
export const FUNCTIONS = functionsOf(ROUTES);

/** `routes` grouped by the function that serves them, in order of first appearance. */
export function functionsOf(
  routes: readonly RouteDef[],
): readonly { name: FunctionName; routes: readonly RouteDef[] }[] {
  return [...new Set(routes.map((r) => r.function))].map((name) => ({
    name,
    routes: routes.filter((r) => r.function === name),
  }));
}

/** Matches a request path against every declared route (the local server, the contract checks of the tests). */
export const routeMatcher = pathMatcher(ROUTES);
