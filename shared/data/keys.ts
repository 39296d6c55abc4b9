/**
 * Every primary and index key of the single table is built here, so key shapes live in one place.
 *
 * | entity            | PK                     | SK                      | GSI2PK / GSI2SK, other attributes |
 * |-------------------|------------------------|-------------------------|-----------------|
 * | organization      | ORG#<org>              | ORG                     |                 |
 * | settings          | ORG#<org>              | SETTINGS                | GSI2: BANK_LINKS / <org> while it has a bank link (sparse) |
 * | quotas            | ORG#<org>              | QUOTAS                  | `api_keys`, `webhooks`: counts the caps are checked against |
 * | api key           | ORG#<org>              | APIKEY#<key>            |                 |
 * | token (by hash)   | TOKEN#<sha256>         | TOKEN                   |                 |
 * | employee          | ORG#<org>              | EMP#<employee>          |                 |
 * | email uniqueness  | ORG#<org>              | EMAIL#<lower-case email>|                 |
 * | payroll           | ORG#<org>              | PAYROLL#<payroll>       | GSI2: ACTIVE_PAYROLLS / <updated_at> while not terminal (sparse) |
 * | payroll window    | ORG#<org>              | WINDOW#<start>#<end>    |                 |
 * | idempotency key   | ORG#<org>              | IDEMPOTENCY#<sha256(key)> | (ttl 24 h)    |
 * | paystub           | STUB#<paystub>         | STUB                    | GSI2: EMP#<employee> / <desc pay_date>#<paystub> |
 * | paystub date bounds | ORG#<org>            | PAYSTUB_BOUNDS          |                 |
 * | webhook endpoint  | ORG#<org>              | WEBHOOK#<webhook>       |                 |
 * | event (outbox)    | ORG#<org>              | EVENT#<event>           | GSI2: UNDISPATCHED_EVENTS / <created_at>#<event> until fanned out (sparse) |
 * | delivery          | ORG#<org>              | EVENT#<event>#DELIVERY#<webhook> | GSI2: PENDING_DELIVERIES / <last activity>#<org>#<event>#<webhook> while pending (sparse) |
 * | audit line        | AUDIT#ORG#<org>        | <at>#<request id>       | (ttl 400 days)  |
 * | audit burst, no org | AUDIT#UNAUTHENTICATED#<yyyy-mm-dd> | <yyyy-mm-ddThh:mm>#burst#<source ip> | count, statuses, reasons, ≤ 20 request ids (ttl 400 days) |
 * | rate limit state  | RATE#<key>#<bucket>    | RATE                    | (ttl 2 min)     |
 * | trace sequence    | ORG#<org>              | SEQ#TRACE#<odfi>        | `value`: the last trace sequence reserved |
 * | file ID sequence  | ORG#<org>              | SEQ#FILE#<destination>#<creation date> | `value`: files that day (ttl 35 days) |
 * | trace block       | ORG#<org>              | TRACEBLOCK#<odfi>#<first sequence, 7 digits> | the run (or file) whose entries carry it |
 * | disbursement file | ORG#<org>              | DFILE#<file id, time-ordered> | every NACHA file written: type, totals, status; GSI2: OPEN_FILES / <org>#<file id> while the bank link owes it something (`ready`, `transmitted`; sparse) |
 * | funding hold      | ORG#<org>              | FUNDINGHOLD#<payroll>   | a returned funding debit not yet re-debited or resolved |
 * | inbound file      | ORG#<org>              | INBOUND#<remote name>#<sha256> | a file picked up from the bank: what it was, its outcome |
 * | bank link status  | ORG#<org>              | BANKLINK_STATUS         | the last connection's outcome |
 * | bank connector    | ORG#<org>              | BANKLINK_CONNECTOR      | deployed: the organization's Transfer Family connector, its secret, the key it trusts |
 *
 * Paystubs get a partition each rather than living under the organization, so a 25,000-employee run spreads
 * its writes instead of pressing on one partition key; the organization is checked on every read. No index key
 * takes a whole run either: a run's paystubs are a range of ids (PaystubNaming), found without an index, and the
 * employee index receives one paystub per employee and run.
 */
export const TABLE_KEYS = { pk: 'PK', sk: 'SK' } as const;
export const GSI2 = { name: 'GSI2', pk: 'GSI2PK', sk: 'GSI2SK' } as const;
export const TTL_ATTRIBUTE = 'ttl';

export interface Key {
  PK: string;
  SK: string;
}

export const keys = {
  organization: (orgId: string): Key => ({ PK: `ORG#${orgId}`, SK: 'ORG' }),
  settings: (orgId: string): Key => ({ PK: `ORG#${orgId}`, SK: 'SETTINGS' }),
  quotas: (orgId: string): Key => ({ PK: `ORG#${orgId}`, SK: 'QUOTAS' }),
  apiKey: (orgId: string, apiKeyId: string): Key => ({ PK: `ORG#${orgId}`, SK: `APIKEY#${apiKeyId}` }),
  apiKeyPrefix: 'APIKEY#',
  token: (tokenHash: string): Key => ({ PK: `TOKEN#${tokenHash}`, SK: 'TOKEN' }),
  employee: (orgId: string, employeeId: string): Key => ({ PK: `ORG#${orgId}`, SK: `EMP#${employeeId}` }),
  employeePrefix: 'EMP#',
  employeeEmail: (orgId: string, email: string): Key => ({ PK: `ORG#${orgId}`, SK: `EMAIL#${email.toLowerCase()}` }),
  orgPartition: (orgId: string): string => `ORG#${orgId}`,
  payroll: (orgId: string, payrollId: string): Key => ({ PK: `ORG#${orgId}`, SK: `PAYROLL#${payrollId}` }),
  payrollPrefix: 'PAYROLL#',
  payrollWindow: (orgId: string, start: string, end: string): Key => ({
    PK: `ORG#${orgId}`,
    SK: `WINDOW#${start}#${end}`,
  }),
  idempotency: (orgId: string, keyHash: string): Key => ({ PK: `ORG#${orgId}`, SK: `IDEMPOTENCY#${keyHash}` }),
  activePayrollsIndex: 'ACTIVE_PAYROLLS',
  bankLinksIndex: 'BANK_LINKS',
  /** Files still to send or awaiting the bank's acknowledgement, by organization: the bank link's work list. */
  openFilesIndex: 'OPEN_FILES',
  openFileSort: (orgId: string, fileId: string): string => `${orgId}#${fileId}`,
  paystub: (paystubId: string): Key => ({ PK: `STUB#${paystubId}`, SK: 'STUB' }),
  paystubsByEmployee: (employeeId: string) => `EMP#${employeeId}`,
  paystubDateBounds: (orgId: string): Key => ({ PK: `ORG#${orgId}`, SK: 'PAYSTUB_BOUNDS' }),
  webhook: (orgId: string, webhookId: string): Key => ({ PK: `ORG#${orgId}`, SK: `WEBHOOK#${webhookId}` }),
  webhookPrefix: 'WEBHOOK#',
  event: (orgId: string, eventId: string): Key => ({ PK: `ORG#${orgId}`, SK: `EVENT#${eventId}` }),
  eventPrefix: 'EVENT#',
  delivery: (orgId: string, eventId: string, webhookId: string): Key => ({
    PK: `ORG#${orgId}`,
    SK: `EVENT#${eventId}#DELIVERY#${webhookId}`,
  }),
  undispatchedEventsIndex: 'UNDISPATCHED_EVENTS',
  pendingDeliveriesIndex: 'PENDING_DELIVERIES',
  auditLog: (orgId: string, at: string, requestId: string): Key => ({
    PK: `AUDIT#ORG#${orgId}`,
    SK: `${at}#${requestId}`,
  }),
  auditLogPartition: (orgId: string): string => `AUDIT#ORG#${orgId}`,
  unauthenticatedAuditLog: (at: string, requestId: string): Key => ({
    PK: `AUDIT#UNAUTHENTICATED#${at.slice(0, 10)}`,
    SK: `${at}#${requestId}`,
  }),
  /** One line per source address and minute for the failures no organization owns (`minute`: `YYYY-MM-DDTHH:MM`). */
  unauthenticatedBurst: (minute: string, sourceIp: string): Key => ({
    PK: `AUDIT#UNAUTHENTICATED#${minute.slice(0, 10)}`,
    SK: `${minute}#burst#${sourceIp}`,
  }),
  rateLimit: (bucketKey: string): Key => ({ PK: `RATE#${bucketKey}`, SK: 'RATE' }),
  traceSequence: (orgId: string, odfi: string): Key => ({ PK: `ORG#${orgId}`, SK: `SEQ#TRACE#${odfi}` }),
  fileIdSequence: (orgId: string, destination: string, creationDate: string): Key => ({
    PK: `ORG#${orgId}`,
    SK: `SEQ#FILE#${destination}#${creationDate}`,
  }),
  traceBlock: (orgId: string, odfi: string, start: number): Key => ({
    PK: `ORG#${orgId}`,
    SK: `${keys.traceBlockPrefix(odfi)}${String(start).padStart(7, '0')}`,
  }),
  traceBlockPrefix: (odfi: string) => `TRACEBLOCK#${odfi}#`,
  disbursementFile: (orgId: string, fileId: string): Key => ({ PK: `ORG#${orgId}`, SK: `DFILE#${fileId}` }),
  disbursementFilePrefix: 'DFILE#',
  fundingHold: (orgId: string, payrollId: string): Key => ({ PK: `ORG#${orgId}`, SK: `FUNDINGHOLD#${payrollId}` }),
  fundingHoldPrefix: 'FUNDINGHOLD#',
  inboundFile: (orgId: string, name: string, sha256: string): Key => ({
    PK: `ORG#${orgId}`,
    SK: `INBOUND#${name}#${sha256}`,
  }),
  inboundFilePrefix: 'INBOUND#',
  bankLinkStatus: (orgId: string): Key => ({ PK: `ORG#${orgId}`, SK: 'BANKLINK_STATUS' }),
  bankLinkConnector: (orgId: string): Key => ({ PK: `ORG#${orgId}`, SK: 'BANKLINK_CONNECTOR' }),
} as const;

/**
 * A date as a sort key that orders newest first on a forward scan (99999999 − YYYYMMDD), so an index reads
 * "pay date descending, then paystub id ascending" in one pass. Ranges flip: [a, b] becomes [desc(b), desc(a)].
 */
export function descendingDate(isoDate: string): string {
  return String(99_999_999 - Number(isoDate.replaceAll('-', ''))).padStart(8, '0');
}
