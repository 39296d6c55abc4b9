import type { components, operations } from '../../openapi/generated/api-types.js';

export { DELIVERY_STATUSES, EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../../shared/domain/events.js';
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
