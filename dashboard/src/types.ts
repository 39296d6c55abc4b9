/** The API's resources as the dashboard reads them (see the README for every field). */

export type TokenType = 'read-only' | 'payroll-submitter' | 'admin';
export const TOKEN_TYPES: readonly TokenType[] = ['read-only', 'payroll-submitter', 'admin'];

export interface ApiKey {
  api_key_id: string;
  name: string;
  type: TokenType;
  scopes: string[];
  token_hint: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  token_issued_at: string;
  previous_token_expires_at: string | null;
}

export interface IssuedApiKey extends ApiKey {
  token: string;
}

export interface LogLine {
  request_id: string;
  at: string;
  organization_id: string | null;
  api_key_id: string | null;
  method: string;
  path: string;
  route: string | null;
  status: number;
  latency_ms: number;
  source_ip: string | null;
  user_agent: string | null;
  auth_failure: string | null;
}

export const EVENT_TYPES = [
  'payroll.submitted', 'payroll.processing', 'payroll.approved', 'payroll.rejected', 'payroll.processed',
  'payroll.completed', 'payroll.failed', 'payroll.cancelled', 'paystub.generated',
] as const;

export interface Webhook {
  webhook_id: string;
  url: string;
  events: string[] | null;
  description: string | null;
  status: 'active' | 'disabled' | 'unreliable';
  consecutive_failures: number;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export interface EventItem {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  payroll_id: string | null;
  deliveries: { webhook_id: string; url: string; status: 'pending' | 'succeeded' | 'failed'; attempts: DeliveryAttempt[] }[];
}

export const PAYROLL_STATUSES = ['pending', 'processing', 'completed', 'rejected', 'failed', 'cancelled'] as const;
export type PayrollStatus = (typeof PAYROLL_STATUSES)[number];

export interface Totals {
  gross_pay: number;
  bonuses: number;
  deductions: number;
  net_pay: number;
}

export interface Payroll {
  payroll_id: string;
  status: PayrollStatus;
  type: 'regular' | 'off_cycle';
  pay_period_start: string;
  pay_period_end: string;
  pay_date: string;
  employee_count: number;
  totals: Totals;
  progress: { total: number; done: number };
  created_at: string;
  updated_at: string;
}

export interface PayrollDetail extends Payroll {
  status_history: { status: string; at: string; reason: string | null }[];
  findings: { code: string; message: string; employee_id: string | null }[];
  disbursement: { entry_count: number; total_credit: number; batch_count: number; created_at: string } | null;
  failure_reason: string | null;
}

export interface Paystub {
  paystub_id: string;
  employee_id: string;
  payroll_id: string;
  employee_name: string;
  period_start: string;
  period_end: string;
  pay_date: string;
  status: 'issued' | 'voided';
  hours_worked: number;
  gross_pay: number;
  bonuses: number;
  deductions: Record<string, number> & { total: number };
  net_pay: number;
  payment: { method: string; account_type: string | null; account_number_last4: string | null; trace_number: string | null; status: string } | null;
}

export interface Employee {
  employee_id: string;
  first_name: string;
  last_name: string;
  email: string;
  employment_type: string;
  pay_group: string;
  pay_schedule: string;
  start_date: string;
  status: string;
  bank_account: { account_type: string; routing_number: string; account_number_last4: string; status: string } | null;
  created_at: string;
}

export interface Settings {
  employment_types: string[];
  pay_groups: string[];
  pay_schedules: string[];
}
