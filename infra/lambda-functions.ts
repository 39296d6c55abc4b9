import { FALLBACK_HANDLER, ROUTES, type RouteDef } from '../shared/http/routes.js';
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
} as const;

/** Every Lambda function the CDK app deploys: one per route handler, the fallback, and the workers. */
export const ALL_HANDLERS: readonly string[] = [
  ...new Set([...ROUTES.map((r) => r.handler as string), FALLBACK_HANDLER, ...Object.values(WORKER_HANDLERS)]),
];

/** What goes into a function's asset: its route's `files`, if it serves a route. */
export function bundleSpecOf(handler: string): FunctionBundleSpec {
  const route = (ROUTES as readonly RouteDef[]).find((r) => r.handler === handler);
  return { handler, files: route?.files };
}
