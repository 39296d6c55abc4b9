import type { Scope } from '../domain/scopes.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export type RateBucket = 'read' | 'payroll_write' | 'employee_write';

/**
 * What a route's function may touch beyond the table reads and writes every authenticated route needs (token
 * lookup, last-used stamp, rate limit). The CDK stack grants exactly this, nothing more.
 */
export type Access =
  // Envelope encryption under the service key, confined to one kind of secret by its encryption context.
  | 'kms:encrypt:bank-account'
  | 'kms:decrypt:bank-account'
  | 'kms:encrypt:webhook-secret'
  | 'kms:decrypt:webhook-secret'
  | 'secret:signing'
  | 'bucket:read'
  | 'bucket:write'
  | 'queue:payroll:send'
  | 'queue:webhooks:send';

export interface RouteDef {
  /** Stable name: the CDK construct id and the OpenAPI operationId. */
  readonly id: string;
  readonly method: HttpMethod;
  /** API Gateway style path, `{name}` for a parameter. */
  readonly path: string;
  /** The entry file under functions/, without extension. */
  readonly handler: string;
  /** null: no token needed. */
  readonly scope: Scope | null;
  readonly bucket: RateBucket | null;
  readonly summary: string;
  readonly access: readonly Access[];
  /**
   * Files the handler reads at run time, as paths from the repository root (shared/http/route-files.ts).
   * Deployed, each is copied beside the function's bundle.
   */
  readonly files?: readonly string[];
}

const route = <const R extends RouteDef>(r: R): R => r;

/**
 * The one route table. The CDK API stack, the local HTTPS server, the authorization matrix tests and the
 * OpenAPI document are all generated from it: a new endpoint is one entry here plus one handler file.
 */
export const ROUTES = [
  route({
    id: 'createEmployee',
    method: 'POST',
    path: '/v1/employees',
    handler: 'api/create-employee',
    scope: 'write:employees',
    bucket: 'employee_write',
    summary: 'Onboard an employee',
    access: ['kms:encrypt:bank-account'],
  }),
  route({
    id: 'listEmployees',
    method: 'GET',
    path: '/v1/employees',
    handler: 'api/list-employees',
    scope: 'read:employees',
    bucket: 'read',
    summary: 'List active employees',
    access: ['secret:signing'],
  }),
  route({
    id: 'getEmployee',
    method: 'GET',
    path: '/v1/employees/{id}',
    handler: 'api/get-employee',
    scope: 'read:employees',
    bucket: 'read',
    summary: 'Get an employee',
    access: [],
  }),
  route({
    id: 'updateEmployee',
    method: 'PATCH',
    path: '/v1/employees/{id}',
    handler: 'api/update-employee',
    scope: 'write:employees',
    bucket: 'employee_write',
    summary: 'Update an employee',
    access: ['kms:encrypt:bank-account'],
  }),
  route({
    id: 'deleteEmployee',
    method: 'DELETE',
    path: '/v1/employees/{id}',
    handler: 'api/delete-employee',
    scope: 'write:employees',
    bucket: 'employee_write',
    summary: 'Remove an employee',
    access: [],
  }),
  route({
    id: 'submitPayroll',
    method: 'POST',
    path: '/v1/payroll',
    handler: 'api/submit-payroll',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Submit a payroll run (or validate it with dry_run=true)',
    access: ['bucket:read', 'bucket:write', 'queue:payroll:send', 'queue:webhooks:send'],
  }),
  route({
    id: 'listPayrolls',
    method: 'GET',
    path: '/v1/payroll',
    handler: 'api/list-payrolls',
    scope: 'read:payroll',
    bucket: 'read',
    summary: 'Payroll history',
    access: ['secret:signing'],
  }),
  route({
    id: 'getPayroll',
    method: 'GET',
    path: '/v1/payroll/{id}',
    handler: 'api/get-payroll',
    scope: 'read:payroll',
    bucket: 'read',
    summary: 'Get a payroll run with its status, progress and history',
    access: ['bucket:read'],
  }),
  route({
    id: 'getDisbursement',
    method: 'GET',
    path: '/v1/payroll/{id}/disbursement',
    handler: 'api/get-disbursement',
    scope: 'read:payroll',
    bucket: 'read',
    summary: 'The NACHA file of a payroll run, or its control totals',
    access: ['bucket:read'],
  }),
  route({
    id: 'cancelPayroll',
    method: 'POST',
    path: '/v1/payroll/{id}/cancel',
    handler: 'api/cancel-payroll',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Cancel a payroll run (sandbox only)',
    access: ['bucket:read', 'queue:webhooks:send'],
  }),
  route({
    id: 'replacePayroll',
    method: 'PUT',
    path: '/v1/payroll/{id}',
    handler: 'api/reject-payroll-change',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Refused: a submitted payroll is immutable',
    access: [],
  }),
  route({
    id: 'updatePayroll',
    method: 'PATCH',
    path: '/v1/payroll/{id}',
    handler: 'api/reject-payroll-change',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Refused: a submitted payroll is immutable',
    access: [],
  }),
  route({
    id: 'deletePayroll',
    method: 'DELETE',
    path: '/v1/payroll/{id}',
    handler: 'api/reject-payroll-change',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Refused: a submitted payroll is immutable',
    access: [],
  }),
  route({
    id: 'listPaystubs',
    method: 'GET',
    path: '/v1/paystubs',
    handler: 'api/list-paystubs',
    scope: 'read:paystubs',
    bucket: 'read',
    summary: 'List paystubs by employee, payroll and date range',
    access: ['secret:signing'],
  }),
  route({
    id: 'getPaystub',
    method: 'GET',
    path: '/v1/paystubs/{id}',
    handler: 'api/get-paystub',
    scope: 'read:paystubs',
    bucket: 'read',
    summary: 'Get a paystub with year-to-date totals, as JSON or PDF',
    access: [],
  }),
  route({
    id: 'createWebhook',
    method: 'POST',
    path: '/v1/webhooks',
    handler: 'api/create-webhook',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Register a webhook endpoint (its signing secret is shown once)',
    access: ['kms:encrypt:webhook-secret'],
  }),
  route({
    id: 'listWebhooks',
    method: 'GET',
    path: '/v1/webhooks',
    handler: 'api/list-webhooks',
    scope: 'admin',
    bucket: 'read',
    summary: 'List webhook endpoints',
    access: ['secret:signing'],
  }),
  route({
    id: 'getWebhook',
    method: 'GET',
    path: '/v1/webhooks/{id}',
    handler: 'api/get-webhook',
    scope: 'admin',
    bucket: 'read',
    summary: 'Get a webhook endpoint',
    access: [],
  }),
  route({
    id: 'updateWebhook',
    method: 'PATCH',
    path: '/v1/webhooks/{id}',
    handler: 'api/update-webhook',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Change a webhook endpoint, or re-enable a paused one',
    access: [],
  }),
  route({
    id: 'deleteWebhook',
    method: 'DELETE',
    path: '/v1/webhooks/{id}',
    handler: 'api/delete-webhook',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Remove a webhook endpoint',
    access: [],
  }),
  route({
    id: 'rotateWebhookSecret',
    method: 'POST',
    path: '/v1/webhooks/{id}/rotate-secret',
    handler: 'api/rotate-webhook-secret',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Rotate the signing secret (both sign for 24 hours)',
    access: ['kms:encrypt:webhook-secret'],
  }),
  route({
    id: 'listEvents',
    method: 'GET',
    path: '/v1/events',
    handler: 'api/list-events',
    scope: 'admin',
    bucket: 'read',
    summary: 'List events with their delivery attempts',
    access: ['secret:signing'],
  }),
  route({
    id: 'getEvent',
    method: 'GET',
    path: '/v1/events/{id}',
    handler: 'api/get-event',
    scope: 'admin',
    bucket: 'read',
    summary: 'Get an event with its delivery attempts',
    access: [],
  }),
  route({
    id: 'redeliverEvent',
    method: 'POST',
    path: '/v1/events/{id}/redeliver',
    handler: 'api/redeliver-event',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Send an event again',
    access: ['queue:webhooks:send'],
  }),
  route({
    id: 'listLogs',
    method: 'GET',
    path: '/v1/logs',
    handler: 'api/list-logs',
    scope: 'admin',
    bucket: 'read',
    summary: 'The audit log',
    access: ['secret:signing'],
  }),
  route({
    id: 'getSettings',
    method: 'GET',
    path: '/v1/settings',
    handler: 'api/get-settings',
    scope: 'admin',
    bucket: 'read',
    summary: 'Get organization settings',
    access: [],
  }),
  route({
    id: 'updateSettings',
    method: 'PATCH',
    path: '/v1/settings',
    handler: 'api/update-settings',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Update organization settings',
    access: ['kms:encrypt:bank-account'],
  }),
  route({
    id: 'createApiKey',
    method: 'POST',
    path: '/v1/api-keys',
    handler: 'api/create-api-key',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Create an API key',
    access: [],
  }),
  route({
    id: 'listApiKeys',
    method: 'GET',
    path: '/v1/api-keys',
    handler: 'api/list-api-keys',
    scope: 'admin',
    bucket: 'read',
    summary: 'List API keys',
    access: ['secret:signing'],
  }),
  route({
    id: 'rotateApiKey',
    method: 'POST',
    path: '/v1/api-keys/{id}/rotate',
    handler: 'api/rotate-api-key',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Rotate an API key (the old token works for a grace period)',
    access: [],
  }),
  route({
    id: 'revokeApiKey',
    method: 'DELETE',
    path: '/v1/api-keys/{id}',
    handler: 'api/revoke-api-key',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Revoke an API key',
    access: [],
  }),
  route({
    id: 'getOpenApi',
    method: 'GET',
    path: '/v1/openapi.json',
    handler: 'api/get-openapi',
    scope: null,
    bucket: null,
    summary: "This API's OpenAPI 3.1 document",
    access: [],
    files: ['docs/openapi.json'],
  }),
  route({
    id: 'getApiReference',
    method: 'GET',
    path: '/docs',
    handler: 'api/get-api-reference',
    scope: null,
    bucket: null,
    summary: 'The API reference page',
    access: [],
    files: ['docs/openapi.json'],
  }),
  route({
    id: 'getApiReferenceScript',
    method: 'GET',
    path: '/docs/reference.js',
    handler: 'api/get-api-reference-script',
    scope: null,
    bucket: null,
    summary: 'The script the API reference page renders with',
    access: [],
    files: ['node_modules/redoc/bundles/redoc.standalone.js'],
  }),
] as const satisfies readonly RouteDef[];

export type RouteId = (typeof ROUTES)[number]['id'];

export const routeById = Object.fromEntries(ROUTES.map((r) => [r.id, r])) as {
  [K in RouteId]: Extract<(typeof ROUTES)[number], { id: K }>;
};

/** Answers unknown paths (404) and known paths with another method (405), deployed and locally. */
export const FALLBACK_HANDLER = 'api/route-not-found';

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

const compiled = ROUTES.map((r) => ({ route: r as RouteDef, ...compile(r.path) }));

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
