import { logger } from './logger.js';

/**
 * One line of the audit log: every authenticated request and every authentication failure. Never a token, a
 * secret or a bank number: only ids, the route and the outcome.
 */
export interface AuditRecord {
  request_id: string;
  /** Known when the token matched a key, even if that key was then refused (expired, revoked, wrong scope). */
  api_key_id: string | null;
  organization_id: string | null;
  method: string;
  /** The path as requested, e.g. /v1/employees/emp_…; never the query string (it may carry page tokens). */
  path: string;
  /** The route template, e.g. /v1/employees/{id}. */
  route: string | null;
  status: number;
  source_ip: string | null;
  user_agent: string | null;
  at: string;
  latency_ms: number;
  /** Set for authentication failures: why the request was refused. */
  auth_failure: string | null;
}

type Sink = (record: AuditRecord) => void;

/**
 * Deployed, the audit line goes to the function's log (CloudWatch Logs keeps it durably, at no cost to the
 * request), and a subscription on those lines writes them to the table in batches. The local stack swaps in a sink
 * that batches them into the table itself. Either way the request never waits on the audit write.
 */
let sink: Sink = (record) => logger.info('audit', { audit_event: 'request', audit: record });

export function emitAudit(record: AuditRecord): void {
  sink(record);
}

export function setAuditSink(next: Sink): void {
  sink = next;
}
