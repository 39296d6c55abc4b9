import { FUNCTIONS } from '../shared/api/routes.js';
import type { Access, RouteDef } from '../shared/api/route.js';
import type { FunctionBundleSpec } from './bundling/bundle-function.js';

/**
 * The functions that are not API routes, by role: their entry files under functions/ (without extension). The
 * constructs deploy them from here, and the cold-start benchmark and the bundle tests measure and load them from
 * here, so a worker cannot be deployed without being measured.
 */
export const WORKER_HANDLERS = {
  processor: 'processor/process-payroll',
  sweeper: 'processor/resume-stuck-payrolls',
  deliverer: 'webhooks/deliver-event',
  auditIngest: 'audit/ingest-audit-log',
  bankLink: 'bank-link/serve-bank-links',
} as const;

/** The entry file of the function that serves a group of routes. */
export const apiHandlerOf = (name: string) => `api/${name}`;

/** Every Lambda function the CDK app deploys: one per resource group of routes, and the workers. */
export const ALL_HANDLERS: readonly string[] = [
  ...FUNCTIONS.map((f) => apiHandlerOf(f.name)),
  ...Object.values(WORKER_HANDLERS),
];

/** What a function serving `routes` may touch: the union of their access lists, each once. */
export const accessOf = (routes: readonly RouteDef[]): Access[] => [...new Set(routes.flatMap((r) => r.access))];

/** What goes into a function's asset: the files its routes read at run time. */
export function bundleSpecOf(handler: string): FunctionBundleSpec {
  const routes = FUNCTIONS.find((f) => apiHandlerOf(f.name) === handler)?.routes ?? [];
  const files = [...new Set(routes.flatMap((r) => r.files ?? []))];
  return { handler, files: files.length > 0 ? files : undefined };
}
