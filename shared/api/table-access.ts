import type { FunctionName } from './route.js';

/**
 * What each function may do in the single table, declared once: the CDK stacks grant exactly this (IAM statements
 * with `dynamodb:LeadingKeys` conditions on the partition prefixes, infra/constructs/service-access.ts), and the
 * local stack enforces exactly this on every call a handler makes (local/table-guard.ts), so the whole
 * end-to-end suite runs each function inside its own grant, as AWS would.
 *
 * A compromised function can reach only its own prefixes: no function but `admin` can write a `TOKEN#` item (an
 * admin token for any organization), and the docs function has no table access at all.
 */

/** The partition key prefixes of shared/data/keys.ts, by what they hold. */
export const PARTITIONS = {
  /** Everything an organization owns but its audit log: settings, keys, employees, runs, events (`ORG#<org>…`). */
  org: 'ORG#',
  /** An organization's audit log (`AUDIT#ORG#<org>`): written by the audit writer alone, read by the admin routes. */
  audit: 'AUDIT#ORG#',
  /** Token items, found by the token's hash: authentication reads them. */
  token: 'TOKEN#',
  /** One partition per paystub. */
  paystub: 'STUB#',
  /** Rate-limit state, per key or organization and bucket. */
  rate: 'RATE#',
  /** The failures no organization owns, counted per source and minute. */
  unattributedAudit: 'AUDIT#UNAUTHENTICATED#',
} as const;
export type Partition = keyof typeof PARTITIONS;

export const READ_ACTIONS = ['GetItem', 'BatchGetItem', 'Query', 'ConditionCheckItem'] as const;
export const WRITE_ACTIONS = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'] as const;
export type ReadAction = (typeof READ_ACTIONS)[number];
export type WriteAction = (typeof WRITE_ACTIONS)[number];
export type IndexName = 'GSI2';

export interface TableAccess {
  /** Read actions, on the `reads` partitions (and the `writes` ones: what a function writes it may read). */
  readActions: readonly ReadAction[];
  reads: readonly Partition[];
  /** Write actions, on the `writes` partitions only. Transactions are authorized per contained action. */
  writeActions: readonly WriteAction[];
  writes: readonly Partition[];
  /** Indexes the function may Query (an index holds every organization's items: the code filters by organization). */
  indexes: readonly IndexName[];
}

/** The workers: queue consumers and scheduled functions. */
export type WorkerName = 'processor' | 'sweeper' | 'deliverer' | 'audit-ingest' | 'bank-link';
export type ComputeName = FunctionName | WorkerName;

/**
 * What every authenticated route does before its own work: read the token item, stamp the key's last use (an
 * `ORG#` item), and take its rate-limit cells.
 */
const AUTHENTICATED = {
  reads: ['token'],
  writes: ['org', 'rate'],
} as const satisfies Pick<TableAccess, 'reads' | 'writes'>;

const ALL_READS: readonly ReadAction[] = READ_ACTIONS;
const ALL_WRITES: readonly WriteAction[] = WRITE_ACTIONS;

function api(own: { reads?: readonly Partition[]; writes?: readonly Partition[]; indexes?: readonly IndexName[] }) {
  return {
    readActions: ALL_READS,
    reads: [...new Set([...AUTHENTICATED.reads, ...(own.reads ?? [])])],
    writeActions: ALL_WRITES,
    writes: [...new Set([...AUTHENTICATED.writes, ...(own.writes ?? [])])],
    indexes: own.indexes ?? [],
  } satisfies TableAccess;
}

export const TABLE_ACCESS: Record<ComputeName, TableAccess | null> = {
  // Answers before any token is read: no table at all.
  docs: null,
  employees: api({ reads: ['org'] }),
  // Submitting, cancelling (which voids paystubs), downloading the file.
  payroll: api({ reads: ['paystub'], writes: ['paystub'] }),
  // Files written and served; money back marks payments on paystubs (reversals), the run and the holds.
  disbursements: api({ reads: ['paystub'], writes: ['paystub'] }),
  // The bank's report marks payments on paystubs and the employees' accounts.
  returns: api({ reads: ['paystub'], writes: ['paystub'] }),
  // Reads: by primary key, and the employee index (lists by employee, year-to-date).
  paystubs: api({ reads: ['paystub'], indexes: ['GSI2'] }),
  webhooks: api({ reads: ['org'], indexes: ['GSI2'] }),
  // API keys (and their token items), settings, the audit log (read only: lines are written by the audit writer).
  admin: api({ reads: ['audit'], writes: ['token'] }),
  // The bank link's settings, the last pass's status and what it picked up: reads (beyond what authenticating writes).
  'bank-link-api': api({ reads: ['org'] }),
  processor: {
    readActions: ['GetItem', 'BatchGetItem', 'Query'],
    reads: [],
    writeActions: ['PutItem', 'UpdateItem', 'BatchWriteItem'],
    writes: ['org', 'paystub'],
    indexes: [],
  },
  sweeper: { readActions: ['Query'], reads: [], writeActions: ['UpdateItem'], writes: ['org'], indexes: ['GSI2'] },
  deliverer: { readActions: ['GetItem'], reads: [], writeActions: ['UpdateItem'], writes: ['org'], indexes: [] },
  // The organizations with a link (GSI2), their files and runs; marks files sent, records what it picked up, and
  // applies the bank's returns as the returns route does (paystubs, runs, employees, holds, events).
  'bank-link': {
    readActions: ['GetItem', 'BatchGetItem', 'Query'],
    reads: ['paystub'],
    writeActions: ['PutItem', 'UpdateItem', 'DeleteItem'],
    writes: ['org', 'paystub'],
    indexes: ['GSI2'],
  },
  // Organization lines whole; unattributed failures counted into their burst line. Nothing else: the audit
  // partitions are this function's alone to write, and it can write nothing an organization's work reads.
  'audit-ingest': {
    readActions: [],
    reads: [],
    writeActions: ['BatchWriteItem', 'UpdateItem'],
    writes: ['audit', 'unattributedAudit'],
    indexes: [],
  },
};

/** Whether `access` allows `action` on an item whose partition key is `pk` (or, for an index Query, on `index`). */
export function allows(
  access: TableAccess | null,
  action: ReadAction | WriteAction,
  target: { pk: string } | { index: string },
): boolean {
  if (!access) return false;
  if ('index' in target) return action === 'Query' && (access.indexes as readonly string[]).includes(target.index);
  const within = (partitions: readonly Partition[]) => partitions.some((p) => target.pk.startsWith(PARTITIONS[p]));
  if ((WRITE_ACTIONS as readonly string[]).includes(action))
    return (access.writeActions as readonly string[]).includes(action) && within(access.writes);
  return (access.readActions as readonly string[]).includes(action) && within([...access.reads, ...access.writes]);
}
