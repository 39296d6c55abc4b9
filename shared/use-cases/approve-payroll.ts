import { objectKeys, type ObjectStore } from '../adapters/object-store.js';
import { centsToNumber } from '../domain/money.js';
import { netPay } from '../domain/payroll.js';
import type { StoredSubmission } from './submit-payroll.js';
import type { Queue } from '../adapters/queue.js';
import type { Environment } from '../adapters/tokens.js';
import type { EmployeeReader } from '../data/employee-repository.js';
import type { OrganizationRepository } from '../data/organization-repository.js';
import type { PayrollRecord } from '../data/payroll-repository.js';
import { earliestApprovablePayDate } from '../domain/approval.js';
import {
  FundingHoldError,
  fundingHoldDetail,
  ApproverIsSubmitterError,
  type Blocker,
  NotFoundError,
  PayrollBlockedError,
  PayrollNotAwaitingApprovalError,
} from '../domain/errors.js';
import { approvalCutoffTime, placeholdersOf } from '../domain/settings.js';
import { payrollEmployeeIds } from './payroll-employee-ids.js';
import { type TransitionServices, transitionWithEvents } from './payroll-transitions.js';

/*
 * Approval (CONTRACT §11): a run accepted under `payroll_approval: required` waits, moving no money, until a key (or
 * person) other than the one that submitted it approves it. What would stop it is listed as blockers, on GET and
 * again at approval; in production the approval must come before the run's `approve_by`.
 */

export interface ApprovalServices extends TransitionServices {
  employees: Pick<EmployeeReader, 'eligibility'>;
  organizations: Pick<OrganizationRepository, 'getSettings' | 'fundingHolds'>;
  objects: ObjectStore;
  queue: Queue;
}

export interface Approver {
  organizationId: string;
  environment: Environment;
  apiKeyId: string;
}

/**
 * What a run awaiting approval will pay each employee, in submission order: net pay is fixed by the accepted body
 * (gross + bonuses − deductions), so the approver sees each amount before any money moves.
 */
export async function pendingNetPay(
  objects: ObjectStore,
  record: PayrollRecord,
): Promise<{ employee_id: string; net_pay: number }[]> {
  const stored = await objects.getJson<StoredSubmission>(
    objectKeys.submission(record.organization_id, record.payroll_id),
  );
  return (stored?.employees ?? []).map((e) => ({ employee_id: e.employee_id, net_pay: centsToNumber(netPay(e)) }));
}

/** Every blocker of a run awaiting approval, read from the run's employees and the organization as they are now. */
export async function payrollBlockers(
  s: Omit<ApprovalServices, 'queue'>,
  record: PayrollRecord,
  now: Date,
): Promise<Blocker[]> {
  const orgId = record.organization_id;
  const [ids, settings, holds] = await Promise.all([
    payrollEmployeeIds(s.objects, orgId, record.payroll_id),
    s.organizations.getSettings(orgId),
    s.organizations.fundingHolds(orgId),
  ]);
  const found = await s.employees.eligibility(orgId, [...new Set(ids)]);
  // What stops the whole run first: an error's details are capped, and these must never be the ones cut off.
  const blockers: Blocker[] = [];
  for (const hold of holds.slice(0, 1)) blockers.push(fundingHoldDetail(hold));
  for (const field of settings ? placeholdersOf(settings, record.environment) : [])
    blockers.push({
      code: 'originator_not_configured',
      field: `originator.${field}`,
      message: `Set the originator's ${field} (PATCH /v1/settings): it still holds a placeholder`,
    });
  if (record.environment === 'production' && record.approve_by && now.getTime() > Date.parse(record.approve_by)) {
    const earliest = earliestApprovablePayDate(now, approvalCutoffTime(settings ?? {}));
    blockers.push({
      code: 'approval_deadline_passed',
      earliest_pay_date: earliest,
      message: `The run had to be approved by ${record.approve_by}; the earliest pay date still possible is ${earliest}`,
    });
  }
  for (const id of ids) {
    const employee = found.get(id);
    if (employee?.status !== 'active')
      blockers.push({ code: 'employee_not_found', employee_id: id, message: `Employee ${id} was removed` });
    else if (employee.bank_account?.status !== 'active')
      blockers.push({
        code: 'missing_bank_account',
        employee_id: id,
        message: `Employee ${id} has no active bank account: set a new bank_account`,
      });
  }
  return blockers;
}

/**
 * Approves a run awaiting approval: refused to the key that submitted it (dual control) and while anything blocks
 * it; then moved to `pending` on the condition it is still awaiting approval (of an approval and a cancel racing,
 * exactly one wins), `payroll.approved` written with it, and its start message sent.
 */
export async function approvePayroll(
  s: ApprovalServices,
  approver: Approver,
  payrollId: string,
): Promise<PayrollRecord> {
  const record = await s.payrolls.get(approver.organizationId, payrollId);
  if (!record) throw new NotFoundError();
  if (record.status !== 'awaiting_approval') throw new PayrollNotAwaitingApprovalError(record.status);
  // Dual control fails closed: a run whose submitter is not recorded cannot be told apart from the approver's own.
  if (!record.submitted_by || record.submitted_by.api_key_id === approver.apiKeyId)
    throw new ApproverIsSubmitterError();
  const now = s.deps.now();
  const blockers = await payrollBlockers(s, record, now);
  // A funding hold is its own refusal (CONTRACT §12), with every other blocker beside it.
  const hold = blockers.find((b) => b.code === 'funding_hold');
  if (hold) throw new FundingHoldError([hold, ...blockers.filter((b) => b !== hold)]);
  if (blockers.length > 0) throw new PayrollBlockedError(blockers);
  const approvedBy = { api_key_id: approver.apiKeyId, at: now.toISOString() };
  const moved = await transitionWithEvents(s, record, 'approve', {
    set: { approved_by: approvedBy },
    details: { 'payroll.approved': { extra: { approved_by: { api_key_id: approver.apiKeyId } } } },
    reason: `Approved by key ${approver.apiKeyId}`,
  });
  const after = (await s.payrolls.get(approver.organizationId, payrollId))!;
  if (!moved) throw new PayrollNotAwaitingApprovalError(after.status);
  // A start message lost to a crash here is sent by the sweeper, which re-drives runs left pending.
  await s.queue.send({ kind: 'start', organization_id: record.organization_id, payroll_id: payrollId });
  return after;
}
