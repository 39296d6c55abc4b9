import * as z from 'zod';
import type { AuditView } from '../use-cases/audit.js';
import { auditRecordSchema, listLogsQuery } from '../schemas/audit.js';
import { EXAMPLE_IDS, fits, page, type Fits } from './common.js';
import { routes } from './route.js';

/** The schema every stored line was checked with when it was written. */
const auditLogLine = z.strictObject(auditRecordSchema.shape).meta({
  id: 'AuditLogLine',
  description: 'One authenticated request or authentication failure. Never a token, a secret or a bank number.',
});
// `method` is typed as a string where lines are written; only lines that pass this schema are stored.
fits<Fits<Omit<AuditView, 'method'> & { method: z.output<typeof auditLogLine>['method'] }, typeof auditLogLine>>(true);

const LINE = {
  request_id: EXAMPLE_IDS.request,
  at: '2026-11-21T10:02:21.004Z',
  organization_id: 'org_01kfz8c1b2d3f4g5h6j7k8m9n0',
  api_key_id: EXAMPLE_IDS.apiKey,
  method: 'POST',
  path: '/v1/payroll',
  route: '/v1/payroll',
  status: 202,
  latency_ms: 142,
  source_ip: '203.0.113.7',
  user_agent: 'ledger-sync/2.1',
  auth_failure: null,
} satisfies z.input<typeof auditLogLine>;

export const logRoutes = routes('admin', {
  listLogs: {
    method: 'GET',
    path: '/v1/logs',
    scope: 'admin',
    bucket: 'read',
    summary: 'The audit log',
    access: ['secret:signing'],
    tag: 'Audit log',
    description:
      "The organization's audit log, newest first, kept 400 days. `from`/`to` are date-times or whole UTC days.",
    query: listLogsQuery,
    success: [
      {
        status: 200,
        description: 'One page',
        schema: page('logs', auditLogLine),
        envelope: 'AuditLogListResponse',
        example: { logs: [LINE], next_page_token: null },
      },
    ],
    errors: {
      400: 'An invalid filter (`status` not 100–599, `path_prefix` not starting with /, `from` after `to`), `limit` or unknown parameter, or an altered or foreign `page_token` (`invalid_page_token`)',
    },
  },
});
