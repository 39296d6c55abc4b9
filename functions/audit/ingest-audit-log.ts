import { gunzipSync } from 'node:zlib';
import type { CloudWatchLogsEvent } from 'aws-lambda';
import * as z from 'zod';
import type { AuditRecord } from '../../shared/adapters/audit-sink.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { logger } from '../../shared/adapters/logger.js';
import { observe } from '../../shared/adapters/observability.js';
import { AuditRepository } from '../../shared/data/audit-repository.js';
import { auditRecordSchema } from '../../shared/schemas/audit.js';
import { ingestAuditRecords } from '../../shared/use-cases/audit.js';

/**
 * The CloudWatch Logs subscription on every API function's log group: each delivery is a gzip batch of the
 * Powertools JSON lines that matched `{ $.audit_event = "request" }`, written to the table in batches.
 *
 * A write that fails throws: CloudWatch Logs invokes this function asynchronously, so Lambda retries the whole
 * delivery, and after its retries the delivery goes to the failure queue (infra/constructs/audit-log-ingestion.ts)
 * for a redrive. Retrying is safe because audit keys are deterministic. A line that is not a valid audit record
 * would fail the same way on every retry, so it is logged (by position, not content) and skipped instead.
 */
/**
 * The subscription payload: `awslogs.data` is base64 of gzipped JSON. Our own schema rather than Powertools'
 * CloudWatchLogsSchema: that module imports zod by name, which defeats tree-shaking and put all of zod (~440 KB)
 * in this function's bundle.
 */
const deliverySchema = z.object({
  awslogs: z.object({
    data: z
      .string()
      .transform((data, ctx) => {
        try {
          return JSON.parse(gunzipSync(Buffer.from(data, 'base64')).toString('utf8')) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'awslogs.data is not base64 gzip of JSON' });
          return z.NEVER;
        }
      })
      .pipe(
        z.object({
          messageType: z.string(),
          logGroup: z.string(),
          logEvents: z.array(z.object({ id: z.string(), timestamp: z.number(), message: z.string() })),
        }),
      ),
  }),
});

let repository: AuditRepository | undefined;
const audit = () => (repository ??= new AuditRepository(defaultTable()));

function auditRecordsOf(event: CloudWatchLogsEvent): AuditRecord[] {
  const { awslogs } = deliverySchema.parse(event);
  // CONTROL_MESSAGE is CloudWatch Logs checking that the destination is reachable: no lines in it.
  if (awslogs.data.messageType !== 'DATA_MESSAGE') return [];
  const records: AuditRecord[] = [];
  for (const [index, logEvent] of awslogs.data.logEvents.entries()) {
    let line: unknown;
    try {
      line = JSON.parse(logEvent.message);
    } catch {
      continue;
    }
    if (typeof line !== 'object' || line === null || (line as { audit_event?: unknown }).audit_event !== 'request')
      continue;
    const parsed = auditRecordSchema.safeParse((line as { audit?: unknown }).audit);
    if (parsed.success) {
      records.push(parsed.data);
    } else {
      logger.warn('skipped an invalid audit line', {
        log_group: awslogs.data.logGroup,
        log_event_id: logEvent.id,
        index,
        problems: parsed.error.issues.map((i) => i.path.join('.')),
      });
    }
  }
  return records;
}

export const handler = observe(async (event: CloudWatchLogsEvent): Promise<{ ingested: number }> => {
  const records = auditRecordsOf(event);
  const ingested = await ingestAuditRecords(audit(), records);
  logger.info('audit lines ingested', { ingested });
  return { ingested };
});
