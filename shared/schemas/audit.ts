import * as z from 'zod';
import type { AuditRecord } from '../adapters/audit-sink.js';
import { isCalendarDate } from '../domain/dates.js';
import { limitParam, lookupId, pageTokenParam } from './common.js';

const HTTP_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/**
 * One audit line as the request path emits it (shared/adapters/audit-sink.ts), checked when it is read back from
 * a log line: a line that does not match is not stored. `at` must be a UTC instant with milliseconds, the form
 * `toISOString` writes, because it is the sort key's prefix and sorts as text.
 */
export const auditRecordSchema = z.object({
  request_id: z.string().min(1).max(128),
  api_key_id: z.string().min(1).max(64).nullable(),
  organization_id: z.string().min(1).max(64).nullable(),
  method: z.enum(HTTP_METHODS),
  path: z.string().min(1).max(2048),
  route: z.string().max(2048).nullable(),
  status: z.number().int().min(100).max(599),
  source_ip: z.string().max(64).nullable(),
  user_agent: z.string().max(1024).nullable(),
  at: z.iso.datetime({ precision: 3 }),
  latency_ms: z.number().int().min(0).max(2_147_483_647),
  auth_failure: z.string().max(200).nullable(),
}) satisfies z.ZodType<AuditRecord>;

const isDateTime = (v: string) => z.iso.datetime({ offset: true }).safeParse(v).success;

/**
 * `from` / `to`: an ISO 8601 date-time (any offset) or a date. A date means the whole UTC day, so
 * `from=2026-11-01&to=2026-11-30` covers November inclusive. Both become UTC instants with milliseconds, the
 * form the log's sort key is written in.
 */
const instant = (bound: 'start' | 'end') =>
  z
    .string()
    // A date-time's fraction of a second has no length of its own: 64 characters hold any real one.
    .max(64)
    .refine((v) => isDateTime(v) || isCalendarDate(v), {
      message: 'Must be an ISO 8601 date-time or a date (YYYY-MM-DD)',
      params: { code: 'invalid_date' },
    })
    .transform((v) =>
      isCalendarDate(v) ? `${v}T${bound === 'start' ? '00:00:00.000' : '23:59:59.999'}Z` : new Date(v).toISOString(),
    )
    .meta({
      // Both forms begin with the date: what every accepted value matches; `anyOf` tells them apart.
      pattern: '^\\d{4}-\\d{2}-\\d{2}(T.+)?$',
      anyOf: [
        { type: 'string', format: 'date-time', maxLength: 64 },
        { type: 'string', format: 'date', maxLength: 10, pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
      ],
    });

export const listLogsQuery = z
  .strictObject({
    api_key_id: lookupId.optional().meta({ description: "Only this key's requests" }),
    status: z
      .string()
      .regex(/^\d{3}$/, { message: 'Must be an HTTP status code from 100 to 599' })
      .transform(Number)
      .pipe(z.number().int().min(100).max(599))
      .optional()
      .meta({
        type: 'integer',
        format: 'int32',
        minimum: 100,
        maximum: 599,
        description: 'Only lines with this HTTP status',
      }),
    path_prefix: z
      .string()
      .max(2048)
      .refine((v) => v.startsWith('/'), { message: 'Must start with /', params: { code: 'invalid_path_prefix' } })
      .optional()
      // The refinement's rule, as a pattern.
      .meta({ pattern: '^/', description: 'Only requests whose path starts with this', example: '/v1/payroll' }),
    from: instant('start')
      .optional()
      .meta({ description: 'From this date-time, or the start of this UTC day (YYYY-MM-DD)', example: '2026-11-01' }),
    to: instant('end')
      .optional()
      .meta({ description: 'Up to this date-time, or the end of this UTC day (YYYY-MM-DD)', example: '2026-11-30' }),
    limit: limitParam,
    page_token: pageTokenParam,
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, {
    message: '`from` must not be after `to`',
    path: ['to'],
    params: { code: 'invalid_date_range' },
  });
export type ListLogsQuery = z.infer<typeof listLogsQuery>;
