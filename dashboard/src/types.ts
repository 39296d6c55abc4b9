import type { components, operations } from '../../openapi/generated/api-types.js';

export { DELIVERY_STATUSES, EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../../shared/domain/events.js';
export {
  FILE_TYPES,
  MAX_REVERSAL_PAYMENTS,
  REVERSAL_REASONS,
  REVERSAL_WINDOW_BANKING_DAYS,
} from '../../shared/domain/money-back.js';
export { PAYROLL_STATUSES } from '../../shared/domain/payroll-status.js';
export { TOKEN_TYPES } from '../../shared/domain/scopes.js';

/**
 * The API's resources as the dashboard reads them: the types generated from the OpenAPI document (`npm run
 * openapi`), never copies, so a field renamed or retyped in the API fails to compile here. The lists of values the
 * dashboard offers in its forms are the service's own (shared/domain), which the document is generated from.
 */
type Schemas = components['schemas'];

export type ApiKey = Schemas['ApiKey'];
export type IssuedApiKey = Schemas['ApiKeyWithToken'];
export type TokenType = ApiKey['type'];

export type LogLine = Schemas['AuditLogLine'];

export type Webhook = Schemas['Webhook'];
export type IssuedWebhook = Schemas['WebhookWithSecret'];

export type EventItem = Schemas['Event'];
export type EventType = EventItem['type'];

/** A run as the list answers it. */
export type Payroll = Schemas['PayrollSummary'];
/** A run as `GET /v1/payroll/{id}` answers it: history, findings, disbursement and failure reason too. */
export type PayrollDetail = Schemas['Payroll'];
export type PayrollStatus = Payroll['status'];
export type Totals = Schemas['PayrollTotals'];

/** A paystub, as the list and the single read answer it (with its year-to-date totals). */
export type Paystub = Schemas['Paystub'];

export type Employee = Schemas['Employee'];

export type Settings = Schemas['Settings'];
export type Originator = Settings['originator'];
export type FundingAccount = NonNullable<Settings['funding_account']>;
/** `PATCH /v1/settings`: all optional; `originator` merged field by field, `funding_account: null` removes it. */
export type SettingsUpdate = operations['updateSettings']['requestBody']['content']['application/json'];

/** The bank's SFTP server files are delivered to (`settings.bank_link`); `null`: files are sent by hand. */
export type BankLink = NonNullable<Settings['bank_link']>;
/** `PATCH /v1/settings` → `bank_link`: the link's fields and exactly one of `password` / `private_key` (write-only). */
export type BankLinkUpdate = NonNullable<SettingsUpdate['bank_link']>;
/** `GET /v1/bank-link`: whether a link is set, and the outcome of its last pass (`state: null` before the first). */
export type BankLinkStatus = Schemas['BankLinkStatus'];
/** `POST /v1/bank-link/test`: both directories listed (`ok: true`), or why the bank's server could not be. */
export type BankConnectionTest = Schemas['BankConnectionTest'];
export type BankDirectoryListing = Schemas['BankDirectoryListing'];
/** A file the bank link picked up from the bank (`GET /v1/bank-link/inbound-files`): an acknowledgement, returns, or neither. */
export type InboundFile = Schemas['InboundFile'];
export type InboundFileKind = InboundFile['kind'];
export type InboundItemOutcome = keyof InboundFile['items'];

/** A NACHA file the service wrote (a run's, a re-debit, a reversal, a prenote), as `GET /v1/disbursement-files` lists it. */
export type DisbursementFile = Schemas['DisbursementFile'];
export type DisbursementFileType = DisbursementFile['type'];
export type DisbursementFileStatus = DisbursementFile['status'];
/** A balanced run's debit of the funding account, and what became of it (`funding` of a run). */
export type Funding = Schemas['Funding'];
export type FundingStatus = Funding['status'];
/** What the re-debit and the resolution answer: the run's funding as it is now. */
export type PayrollFunding = Schemas['PayrollFunding'];
/** `POST /v1/payroll/{id}/reversals`: the file written and the payments it takes back. */
export type Reversal = Schemas['Reversal'];
export type ReversalReason = Reversal['payments'][number]['reason'];
export type PaymentStatus = Paystub['payment']['status'];

/**
 * The organization's funding hold (`GET /v1/settings` → `funding_hold`): the run whose funding debit the bank returned,
 * its return code, and since when. Read as optional: an API that does not answer it says nothing about a hold.
 */
export interface FundingHold {
  payroll_id: string;
  code: string;
  since: string;
}
export function fundingHoldOf(settings: Settings | null | undefined): FundingHold | null {
  const hold = (settings as { funding_hold?: FundingHold | null } | null | undefined)?.funding_hold;
  return hold && typeof hold.payroll_id === 'string' ? hold : null;
}
