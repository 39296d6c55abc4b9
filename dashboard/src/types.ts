import type { components } from '../../shared/schemas/openapi/api-types.js';

/**
 * The API's resources as the dashboard reads them: the types generated from the OpenAPI document (`npm run
 * openapi`), never copies, so a field renamed or retyped in the API fails to compile here. The lists of values the
 * dashboard offers in its forms are checked against the same types, both ways.
 */
type Schemas = components['schemas'];

/** Compiles only when `Listed` holds every member of `All`: a value added to the API must be offered here too. */
type Exhaustive<All, Listed extends All> = [All] extends [Listed] ? true : false;
type Assert<T extends true> = T;

export type ApiKey = Schemas['ApiKey'];
export type IssuedApiKey = Schemas['ApiKeyWithToken'];
export type TokenType = ApiKey['type'];
export const TOKEN_TYPES = ['read-only', 'payroll-submitter', 'admin'] as const satisfies readonly TokenType[];
type TokenTypesComplete = Assert<Exhaustive<TokenType, (typeof TOKEN_TYPES)[number]>>;

export type LogLine = Schemas['AuditLogLine'];

export type Webhook = Schemas['Webhook'];
export type IssuedWebhook = Schemas['WebhookWithSecret'];

export type EventItem = Schemas['Event'];
export type EventType = EventItem['type'];
export type DeliveryAttempt = EventItem['deliveries'][number]['attempts'][number];
export const EVENT_TYPES = [
  'payroll.submitted', 'payroll.processing', 'payroll.approved', 'payroll.rejected', 'payroll.processed',
  'payroll.completed', 'payroll.failed', 'payroll.cancelled', 'paystub.generated',
] as const satisfies readonly EventType[];
type EventTypesComplete = Assert<Exhaustive<EventType, (typeof EVENT_TYPES)[number]>>;

/** A run as the list answers it. */
export type Payroll = Schemas['PayrollSummary'];
/** A run as `GET /v1/payroll/{id}` answers it: history, findings, disbursement and failure reason too. */
export type PayrollDetail = Schemas['Payroll'];
export type PayrollStatus = Payroll['status'];
export const PAYROLL_STATUSES = ['pending', 'processing', 'completed', 'rejected', 'failed', 'cancelled'] as const satisfies readonly PayrollStatus[];
type PayrollStatusesComplete = Assert<Exhaustive<PayrollStatus, (typeof PAYROLL_STATUSES)[number]>>;
export type Totals = Schemas['PayrollTotals'];

/** A paystub as the list answers it (without year-to-date totals). */
export type Paystub = Schemas['PaystubListItem'];

export type Employee = Schemas['Employee'];

export type Settings = Schemas['Settings'];
