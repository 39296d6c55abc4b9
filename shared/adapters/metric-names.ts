/**
 * The business metrics the functions publish (CloudWatch embedded metric format, through Powertools Metrics) and
 * the alarms and dashboard of a deployment read (infra/constructs/monitoring.ts): one list, so a renamed metric
 * cannot leave an alarm watching nothing.
 *
 * Every metric is published under the deployment's namespace (`POWERTOOLS_METRICS_NAMESPACE`, set by the stacks)
 * with one dimension, `service` = `SERVICE_NAME`, and unit Count.
 */
export const SERVICE_NAME = 'payroll';

export const METRIC_NAMES = {
  /** A payroll run accepted by POST /v1/payroll (202), a replay of the same idempotency key not counted. */
  payrollsSubmitted: 'PayrollsSubmitted',
  /** A run that reached `completed`. */
  payrollsCompleted: 'PayrollsCompleted',
  /**
   * A run that ended `failed`: the processor gave up on it (an error on its message's last receive, a disbursement
   * file that cannot be written) or, in a sandbox, `simulate:fail`. Returned deposits never fail a run.
   */
  payrollsFailed: 'PayrollsFailed',
  /** Paystubs written by the processor (one per employee of a completed chunk). */
  paystubsWritten: 'PaystubsWritten',
  /** Webhook deliveries closed `failed` after their last attempt. */
  webhookDeliveriesFailed: 'WebhookDeliveriesFailed',
  /** Return entries applied from a bank's return file (POST /v1/disbursement-returns). */
  returnsApplied: 'ReturnsApplied',
  /** Notifications of change applied (an employee's bank account corrected). */
  correctionsApplied: 'CorrectionsApplied',
  /** A disbursement file found late by the bank link (not at the bank by its cut-off, or not acknowledged an hour after). */
  disbursementFilesLate: 'DisbursementFilesLate',
  /** A bank-link pass that ended `failing` (no connection, a refused host, a host key not the pinned one, a transfer). */
  bankLinkPassesFailed: 'BankLinkPassesFailed',
} as const;
