import { apiKeyRoutes } from './api-keys.js';
import { docsRoutes } from './docs.js';
import { employeeRoutes } from './employees.js';
import { logRoutes } from './logs.js';
import { payrollRoutes } from './payroll.js';
import { paystubRoutes } from './paystubs.js';
import type { FunctionName, RouteDef } from './route.js';

export type { Access, RouteDef } from './route.js';
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
  ...paystubRoutes,
  ...webhookRoutes,
  ...logRoutes,
  ...settingsRoutes,
  ...apiKeyRoutes,
  ...docsRoutes,
};
export type RouteId = keyof typeof routeById;
export const ROUTES: readonly RouteDef[] = Object.values(routeById);

/** The functions that serve routes, with the routes each serves. `docs` also answers what no route claims. */
export const FUNCTIONS = [...new Set(ROUTES.map((r) => r.function))].map((name) => ({
  name,
  routes: ROUTES.filter((r) => r.function === name),
})) as readonly { name: FunctionName; routes: readonly RouteDef[] }[];

export interface RouteMatch {
  route: RouteDef;
  params: Record<string, string>;
}

function compile(path: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  const pattern = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { regex: new RegExp(`^${pattern}/?$`), names };
}

const compiled = ROUTES.map((r) => ({ route: r, ...compile(r.path) }));

/** The routes whose path matches, whatever their method. */
export function matchPath(path: string): RouteMatch[] {
  const out: RouteMatch[] = [];
  for (const c of compiled) {
    const m = c.regex.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    c.names.forEach((name, i) => {
      params[name] = decodeURIComponent(m[i + 1]!);
    });
    out.push({ route: c.route, params });
  }
  return out;
}
