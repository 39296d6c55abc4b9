import { createHash } from 'node:crypto';
import type { Deps } from '../adapters/clock.js';
import { METRIC_NAMES } from '../adapters/metric-names.js';
import { objectKeys, type ObjectStore } from '../adapters/object-store.js';
import { businessMetrics } from '../adapters/observability.js';
import type { Queue } from '../adapters/queue.js';
import type { Environment } from '../adapters/tokens.js';
import type { EmployeeEligibility, EmployeeReader } from '../data/employee-repository.js';
import type { OrganizationRepository } from '../data/organization-repository.js';
import type { PayrollRecord, PayrollRepository } from '../data/payroll-repository.js';
import { isCalendarDate } from '../domain/dates.js';
import { disbursementDates, tooSoon } from '../domain/disbursement.js';
import { type LifecycleCommand, PAYROLL_TRANSITIONS } from '../domain/payroll-lifecycle.js';
import {
  approvalCutoffTime,
  approvalMode,
  type OrganizationSettings,
  placeholdersOf,
  type OriginatorField,
} from '../domain/settings.js';
import { approveBy, earliestApprovablePayDate } from '../domain/approval.js';
import { originatorInput } from '../schemas/originator.js';
import { DomainError, fundingHoldDetail, IdempotencyKeyReusedError, PayloadTooLargeError } from '../domain/errors.js';
import { MAX_EMPLOYEES_PER_PAYROLL, contentHash, payrollTotals, type PayrollSubmission } from '../domain/payroll.js';
import {
  PAYROLL_PROBLEM_MESSAGE,
  PAYROLL_PROBLEM_KIND,
  TooManyEmployeesError,
  validatePayrollBody,
  type PayrollProblem,
} from '../schemas/payroll.js';
import { dispatchQuietly, payrollEvent, type EventServices } from './events.js';
import { payrollView, type PayrollView } from './payroll-view.js';

export interface SubmitServices extends EventServices {
  payrolls: PayrollRepository;
  employees: Pick<EmployeeReader, 'eligibility'>;
  /** The originator must be able to write a file before a run is accepted. */
  organizations: Pick<OrganizationRepository, 'getSettings' | 'fundingHolds'>;
  objects: ObjectStore;
  queue: Queue;
  deps: Deps;
  chunkSize: number;
}

export interface StoredSubmission extends PayrollSubmission {
  payroll_id: string;
  organization_id: string;
}

/**
 * The contract's precedence: a run is refused for its most basic problem. Malformed input first, then what it refers
 * to (employees, bank accounts, the originator, the pay date), then a clash with another run.
 */
const KIND_PRECEDENCE = ['invalid', 'unprocessable', 'conflict'] as const;

export class PayrollRejectedError extends DomainError {
  constructor(problems: PayrollProblem[]) {
    const present = new Set<string>(problems.map((p) => PAYROLL_PROBLEM_KIND[p.code]));
    const kind = KIND_PRECEDENCE.find((k) => present.has(k))!;
    const code = problems.find((p) => PAYROLL_PROBLEM_KIND[p.code] === kind)!.code;
    super(kind, code, PAYROLL_PROBLEM_MESSAGE[code], problems);
  }
}

function employeeProblems(entries: unknown[], found: Map<string, EmployeeEligibility>): PayrollProblem[] {
  const problems: PayrollProblem[] = [];
  entries.forEach((raw, i) => {
    const id = (raw as { employee_id?: unknown } | null)?.employee_id;
    if (typeof id !== 'string' || id === '') return;
    const employee = found.get(id);
    if (employee?.status !== 'active') {
      problems.push({
        field: `employees[${i}].employee_id`,
        code: 'employee_not_found',
        message: `No current employee ${id} in this organization`,
      });
    } else if (employee.bank_account?.status !== 'active') {
      problems.push({
        field: `employees[${i}].employee_id`,
        code: 'missing_bank_account',
        message:
          employee.bank_account?.status === 'invalid'
            ? `Employee ${id}'s bank account is invalid (${employee.bank_account.status_reason ?? 'returned by the bank'}): set a new bank_account`
            : `Employee ${id} has no active bank account on file`,
      });
    }
  });
  return problems;
}

/**
 * What is refused before anything is stored because the file could not be written or would settle late: an
 * originator still holding its placeholders (production), or holding a value saved before the settings were checked
 * as strictly as the file needs (any environment), and in production a pay date whose file would reach the bank
 * after its release day. The sandbox accepts any date.
 */
async function disbursementProblems(
  s: SubmitServices,
  orgId: string,
  environment: Environment,
  payDate: string | undefined,
): Promise<{ problems: PayrollProblem[]; settings: OrganizationSettings }> {
  const problems: PayrollProblem[] = [];
  const [settings, holds] = await Promise.all([
    s.organizations.getSettings(orgId),
    s.organizations.fundingHolds(orgId),
  ]);
  if (!settings) throw new Error(`Organization ${orgId} has no settings`);
  // A funding debit came back: no new run moves money until it is re-debited or paid otherwise (CONTRACT §12).
  for (const hold of holds.slice(0, 1)) problems.push(fundingHoldDetail(hold));
  const late =
    environment === 'production' && payDate !== undefined ? lateFor(payDate, settings, s.deps.now()) : undefined;
  if (late) {
    problems.push({
      field: 'pay_date',
      code: 'pay_date_too_soon',
      earliest_pay_date: late.earliest_pay_date,
      release_by: late.release_by,
      message: late.approve_by
        ? `A run for this pay date had to be approved by ${late.approve_by} (its release day's cut-off, New York time); the earliest pay date still possible is ${late.earliest_pay_date}`
        : `The file for this pay date had to reach the bank by ${late.release_by} (New York time); the earliest pay date still possible is ${late.earliest_pay_date}`,
    });
  }
  const placeholders = new Set(placeholdersOf(settings, environment));
  for (const field of placeholders) {
    problems.push({
      field: `originator.${field}`,
      code: 'originator_not_configured',
      message: `Set the originator's ${field} (PATCH /v1/settings) with the value your bank gave you: it still holds a placeholder`,
    });
  }
  const stored = originatorInput.safeParse(settings.originator);
  for (const issue of stored.success ? [] : stored.error.issues) {
    const field = String(issue.path[0]) as OriginatorField;
    if (placeholders.has(field)) continue;
    problems.push({
      field: `originator.${field}`,
      code: 'originator_not_configured',
      message: `The originator's ${field} cannot be written in a NACHA file (${issue.message}): set it again with PATCH /v1/settings`,
    });
  }
  return { problems, settings };
}

/**
 * Too late in production: a file due at the bank before today, or, when runs need approval, a run whose approval
 * deadline has already passed (it would be blocked from the start, holding its pay period's window).
 */
function lateFor(
  payDate: string,
  settings: OrganizationSettings,
  now: Date,
): { earliest_pay_date: string; release_by: string; approve_by?: string } | undefined {
  const late = tooSoon(payDate, now);
  if (late || approvalMode(settings) !== 'required') return late;
  const { release_by } = disbursementDates(payDate);
  const deadline = approveBy(release_by, settings);
  if (Date.parse(deadline) > now.getTime()) return undefined;
  return {
    release_by,
    approve_by: deadline,
    earliest_pay_date: earliestApprovablePayDate(now, approvalCutoffTime(settings)),
  };
}

function windowProblem(existingPayrollId: string): PayrollProblem {
  return {
    field: 'pay_period_start',
    code: 'duplicate_payroll_window',
    payroll_id: existingPayrollId,
    message: `A regular payroll for this pay period was already submitted: ${existingPayrollId}`,
  };
}

export type SubmitOutcome =
  | { kind: 'dry_run'; data: Omit<PayrollView, 'payroll_id' | 'status' | 'approve_by' | 'created_at'> }
  | { kind: 'accepted'; data: PayrollView; replayed: boolean };

/**
 * Validates a payroll exactly as a real submission would be (every problem, same codes), then either answers
 * the computed totals (dry run) or stores the body in S3, the record, window and idempotency items in one
 * DynamoDB transaction, and puts a reference to it on the processing queue.
 */
export async function submitPayroll(
  s: SubmitServices,
  /** `apiKeyId`: the submitting key, which dual control refuses as the run's approver. */
  caller: { organizationId: string; environment: Environment; apiKeyId?: string },
  body: Record<string, unknown>,
  options: { dryRun: boolean; idempotencyKey?: string },
): Promise<SubmitOutcome> {
  const orgId = caller.organizationId;
  let validated: ReturnType<typeof validatePayrollBody>;
  try {
    validated = validatePayrollBody(body);
  } catch (err) {
    if (err instanceof TooManyEmployeesError)
      throw new PayloadTooLargeError(`A payroll pays at most ${MAX_EMPLOYEES_PER_PAYROLL} employees`);
    throw err;
  }
  const keyHash = options.idempotencyKey
    ? createHash('sha256').update(options.idempotencyKey).digest('hex')
    : undefined;
  const hash = validated.submission ? contentHash(validated.submission) : undefined;

  // A replay must not run into its own window: the key is looked at before anything else is checked.
  if (keyHash && hash && !options.dryRun) {
    const replay = await replayIfKnown(s, orgId, keyHash, hash);
    if (replay) return replay;
  }

  const ids = validated.employeeIds.filter((id) => id.length <= 64);
  const checkWindow =
    (body.type ?? 'regular') === 'regular' &&
    typeof body.pay_period_start === 'string' &&
    typeof body.pay_period_end === 'string';
  const payDate = typeof body.pay_date === 'string' && isCalendarDate(body.pay_date) ? body.pay_date : undefined;
  const reads = Promise.all([
    s.employees.eligibility(orgId, ids),
    checkWindow
      ? s.payrolls.getWindow(orgId, body.pay_period_start as string, body.pay_period_end as string)
      : undefined,
    disbursementProblems(s, orgId, caller.environment, payDate),
  ]);
  // A body valid on its own is stored while its employees, window and settings are read rather than after them.
  // The record that makes it a run is still written only once the body is stored, so no run, window or
  // idempotency key ever points at a missing body (the processor's start step and replays both need it); a body
  // whose run is refused after all is deleted again.
  const stored: StoredSubmission | undefined =
    !options.dryRun && validated.submission
      ? { payroll_id: s.deps.newId('pay'), organization_id: orgId, ...validated.submission }
      : undefined;
  const body$ = stored ? storeBody(s, orgId, stored) : undefined;
  let recordSent = false;
  try {
    const [found, existingWindow, disbursement] = await reads;
    const entries = Array.isArray(body.employees) ? (body.employees as unknown[]) : [];
    const problems = [...validated.problems, ...employeeProblems(entries, found), ...disbursement.problems];
    if (existingWindow) {
      // The window may be taken by this very request's twin, which won the race since the key was looked at:
      // look again before answering 409, so a retried idempotent submission is always replayed.
      if (keyHash && hash && !options.dryRun && validated.problems.length === 0) {
        const replay = await replayIfKnown(s, orgId, keyHash, hash);
        if (replay) {
          await body$?.discard();
          return replay;
        }
      }
      problems.push(windowProblem(existingWindow));
    }
    if (problems.length > 0 || !validated.submission || !hash) throw new PayrollRejectedError(problems);

    const submission = validated.submission;
    const totals = payrollTotals(submission.employees);
    if (options.dryRun || !stored || !body$) {
      return {
        kind: 'dry_run',
        data: {
          type: submission.type,
          pay_period_start: submission.pay_period_start,
          pay_period_end: submission.pay_period_end,
          pay_date: submission.pay_date,
          ...disbursementDates(submission.pay_date),
          employee_ids: submission.employees.map((e) => e.employee_id),
          employee_count: submission.employees.length,
          totals: payrollView.totals(totals),
          content_hash: hash,
        },
      };
    }

    await body$.written();
    const now = s.deps.now();
    const at = now.toISOString();
    const acceptance = approvalMode(disbursement.settings) === 'required' ? 'submit_for_approval' : 'submit';
    const status = PAYROLL_TRANSITIONS[acceptance].to;
    const record: PayrollRecord = {
      payroll_id: stored.payroll_id,
      organization_id: orgId,
      environment: caller.environment,
      type: submission.type,
      status,
      pay_period_start: submission.pay_period_start,
      pay_period_end: submission.pay_period_end,
      pay_date: submission.pay_date,
      employee_count: submission.employees.length,
      totals,
      content_hash: hash,
      created_at: at,
      updated_at: at,
      status_history: [{ status, at, reason: null }],
      chunk_size: s.chunkSize,
      chunk_count: null,
      chunks_done: new Set(),
      processing_started_at: null,
      findings: [],
      disbursement: null,
      failure_reason: null,
      file_key: null,
      paystubs_voided_at: null,
      submitted_by: caller.apiKeyId ? { api_key_id: caller.apiKeyId } : null,
      approved_by: null,
      approve_by:
        acceptance === 'submit_for_approval'
          ? approveBy(disbursementDates(submission.pay_date).release_by, disbursement.settings)
          : null,
      originator: null,
      funding_account: null,
      trace_start: null,
      returns_count: 0,
      returns_amount: 0,
      file_id_modifier: null,
      funding: null,
      reversals_count: 0,
      reversals_amount: 0,
    };
    // The confirmation event is written with the run itself: no accepted run is ever without its payroll.submitted.
    const submitted = payrollEvent(s.deps, record, 'payroll.submitted');
    // From here a failure may have written the record after all (a transaction whose answer was lost): the body
    // stays, or a run could exist without it.
    recordSent = true;
    const outcome = await s.payrolls.create(record, {
      window: submission.type === 'regular',
      idempotencyKeyHash: keyHash,
      now,
      alsoWrite: s.events.items([submitted]),
    });
    if (!outcome.ok) {
      // Someone else won the race; the body written above belongs to nobody.
      await body$.discard();
      if (outcome.reason === 'window_taken') throw new PayrollRejectedError([windowProblem(outcome.existingPayrollId)]);
      const replay = await replayIfKnown(s, orgId, keyHash!, hash);
      if (replay) return replay;
      throw new IdempotencyKeyReusedError();
    }
    // The run exists from this write on: a replay of its idempotency key never reaches it, so counts nothing.
    businessMetrics.count(METRIC_NAMES.payrollsSubmitted);
    // Neither waits for the other: the run's start message and its payroll.submitted fan-out (which never throws)
    // go out side by side, and a failed send is still this request's failure.
    const startsNow = (PAYROLL_TRANSITIONS[acceptance].commands as readonly LifecycleCommand[]).includes(
      'enqueue_start',
    );
    const [sent] = await Promise.allSettled([
      startsNow ? s.queue.send({ kind: 'start', organization_id: orgId, payroll_id: stored.payroll_id }) : undefined,
      dispatchQuietly(s, [submitted]),
    ]);
    if (sent.status === 'rejected') throw sent.reason;
    return {
      kind: 'accepted',
      data: payrollView.submitted(
        record,
        stored.employees.map((e) => e.employee_id),
      ),
      replayed: false,
    };
  } catch (err) {
    if (!recordSent) await body$?.discard();
    throw err;
  }
}

/**
 * The write of a run's body, begun before its checks end. `written` answers once it is stored (or throws its
 * failure); `discard` waits for it to settle. A body whose run was never recorded is left where it is (no runtime
 * role may delete an object): no record points at it, and it holds no bank data.
 */
function storeBody(s: SubmitServices, orgId: string, stored: StoredSubmission) {
  const key = objectKeys.submission(orgId, stored.payroll_id);
  // Settled into a value at once: a write that fails while the reads are still awaited is never an unhandled
  // rejection, and is thrown by `written` when the run needs it.
  const settled = s.objects.putJson(key, stored).then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  let discarded: Promise<void> | undefined;
  return {
    async written(): Promise<void> {
      const outcome = await settled;
      if (!outcome.ok) throw outcome.error;
    },
    discard(): Promise<void> {
      discarded ??= settled.then(() => undefined);
      return discarded;
    },
  };
}

async function replayIfKnown(
  s: SubmitServices,
  orgId: string,
  keyHash: string,
  hash: string,
): Promise<SubmitOutcome | undefined> {
  const known = await s.payrolls.getIdempotency(orgId, keyHash, s.deps.now());
  if (!known) return undefined;
  if (known.content_hash !== hash) throw new IdempotencyKeyReusedError();
  const record = await s.payrolls.get(orgId, known.payroll_id);
  const stored = await s.objects.getJson<StoredSubmission>(objectKeys.submission(orgId, known.payroll_id));
  if (!record || !stored) throw new Error(`Idempotency key points at a missing payroll ${known.payroll_id}`);
  return {
    kind: 'accepted',
    data: payrollView.submitted(
      record,
      stored.employees.map((e) => e.employee_id),
    ),
    replayed: true,
  };
}
