import * as z from 'zod';
import type { AuditView } from '../use-cases/audit.js';
import { auditRecordSchema, listLogsQuery } from '../schemas/audit.js';
import { TEXT_PATTERN } from '../schemas/common.js';
import { EXAMPLE_IDS, fits, page, type Fits } from './common.js';
import { routes } from './route.js';

/**
 * The lines of the audit log: their bounds are those of the schema every stored line was checked with when it was
 * written, and is checked with again when it is read (lines that fail it are skipped). The patterns below are what
 * the request path writes (shared/http/middleware/request-context.ts): documented here, not checked on reading.
 */
const line = auditRecordSchema.shape;
const auditLogLine = z
  .strictObject({
    ...line,
    request_id: line.request_id.meta({ pattern: '^[0-9A-Za-z-]+$', description: "The request's id (`X-Request-Id`)" }),
    api_key_id: line.api_key_id.meta({ pattern: '^key_[0-9a-hjkmnp-tv-z]{26}$' }),
    organization_id: line.organization_id.meta({ pattern: '^org_[0-9a-hjkmnp-tv-z]{26}$' }),
    // Paths and route templates as API Gateway gives them.
    path: line.path.meta({ pattern: '^/', description: 'The path as requested, secrets in it redacted' }),
    route: line.route.meta({ pattern: '^/', description: 'The route template, e.g. `/v1/employees/{id}`' }),
    source_ip: line.source_ip.meta({ pattern: '^[0-9A-Za-z:.%_-]+$', description: 'An IPv4 or IPv6 address' }),
    // No pattern: a user agent is whatever the client sent (redacted). Left out of the OWASP check on purpose.
    user_agent: line.user_agent,
    // `toISOString`: UTC with milliseconds, as the schema requires.
    at: line.at.meta({ maxLength: 24 }),
    status: line.status.meta({ format: 'int32' }),
    latency_ms: line.latency_ms.meta({ format: 'int32' }),
    // The authenticator's own words (shared/http/authenticator.ts).
    auth_failure: line.auth_failure.meta({ pattern: TEXT_PATTERN }),
  })
  .meta({
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

/**
 * The longest page token of the audit log. Its filters are signed into it, `path_prefix` among them: up to 2048
 * characters of any kind, each up to 7 bytes once JSON-escaped twice (the filters, then the payload), so about 15 KB
 * of payload in base64url. Such a token is longer than `page_token` accepts (4096): a known limit of very long or
 * exotic `path_prefix` filters.
 */
const LOG_PAGE_TOKEN_LENGTH = 20_480;

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
        schema: page('logs', auditLogLine, LOG_PAGE_TOKEN_LENGTH),
        envelope: 'AuditLogListResponse',
        example: { logs: [LINE], next_page_token: null },
      },
    ],
    errors: {
      400: 'An invalid filter (`status` not 100–599, `path_prefix` not starting with /, `from` after `to`), `limit` or unknown parameter, or an altered or foreign `page_token` (`invalid_page_token`)',
    },
  },
});
