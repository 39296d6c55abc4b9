import type { AuditRecord } from '../adapters/audit-sink.js';
import { createHash } from 'node:crypto';
import type { AuditFilters, AuditRepository, UnauthenticatedBurst } from '../data/audit-repository.js';
import { inParallel } from '../data/batch.js';
import type { Page } from '../data/paginate.js';
import { auditRetentionStart, redactFreeText, redactPath } from '../domain/audit.js';

/**
 * Stores audit lines, whichever way they arrive (the deployed log subscription, the local batcher). Paths and
 * user agents are scrubbed here, at the one door into the table, so neither way can store a token or an account
 * number a client put where it did not belong. Throws when the write fails: the caller must retry or keep the lines.
 */
export async function ingestAuditRecords(
  repo: Pick<AuditRepository, 'putAll' | 'addBurst'>,
  records: readonly AuditRecord[],
): Promise<number> {
  if (records.length === 0) return 0;
  const attributed = records.filter((r) => r.organization_id !== null);
  if (attributed.length > 0) {
    await repo.putAll(
      attributed.map((r) => ({
        ...r,
        path: redactPath(r.path),
        user_agent: r.user_agent === null ? null : redactFreeText(r.user_agent),
      })),
    );
  }
  // Failures no organization owns (unknown or malformed tokens, from anyone): one burst line per source and minute.
  await inParallel(bursts(records.filter((r) => r.organization_id === null)), 4, (b) => repo.addBurst(b));
  return records.length;
}

/** Groups unattributed lines by source address and minute. */
export function bursts(records: readonly AuditRecord[]): UnauthenticatedBurst[] {
  const groups = new Map<string, AuditRecord[]>();
  for (const r of records) {
    const key = `${r.at.slice(0, 16)} ${r.source_ip ?? 'unknown'}`;
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  return [...groups.values()].map((group) => {
    const ats = group.map((r) => r.at).sort();
    const ids = group.map((r) => r.request_id);
    return {
      minute: ats[0]!.slice(0, 16),
      source_ip: group[0]!.source_ip ?? 'unknown',
      first_at: ats[0]!,
      last_at: ats.at(-1)!,
      request_ids: ids,
      statuses: [...new Set(group.map((r) => r.status))],
      reasons: [...new Set(group.flatMap((r) => (r.auth_failure ? [r.auth_failure] : [])))],
      methods: [...new Set(group.map((r) => r.method))],
      group_hash: createHash('sha256')
        .update([...ids].sort().join('\n'))
        .digest('base64url')
        .slice(0, 22),
    };
  });
}

/**
 * One page of an organization's log, newest first. Reads never reach past the retention window: lines older
 * than that are due for deletion (DynamoDB's TTL removes them within days, not at the second) and are not shown.
 */
export async function listAuditLog(
  repo: Pick<AuditRepository, 'list'>,
  now: Date,
  orgId: string,
  filters: AuditFilters,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<Page<AuditRecord>> {
  const oldest = auditRetentionStart(now);
  // DynamoDB refuses a BETWEEN whose bounds are reversed; a range wholly past retention is simply empty.
  if (filters.to && filters.to < oldest) return { items: [] };
  const from = filters.from && filters.from > oldest ? filters.from : oldest;
  return repo.list(orgId, { ...filters, from }, limit, startKey);
}

export function auditView(r: AuditRecord) {
  return {
    request_id: r.request_id,
    at: r.at,
    organization_id: r.organization_id,
    api_key_id: r.api_key_id,
    method: r.method,
    path: r.path,
    route: r.route,
    status: r.status,
    latency_ms: r.latency_ms,
    source_ip: r.source_ip,
    user_agent: r.user_agent,
    auth_failure: r.auth_failure,
  };
}
export type AuditView = ReturnType<typeof auditView>;
