import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { paystubFileName } from '../../../shared/domain/paystub-file.js';
import { ApiError, api, apiBlob, listPage, type Page } from '../api.js';
import { environmentOf, readToken } from '../session.js';
import type { PayrollDetail, Paystub, Settings } from '../types.js';
import {
  ErrorBox,
  formatDate,
  formatDateTime,
  formatMoney,
  formatPeriod,
  LoadMore,
  PageTitle,
  StatusBadge,
  TableRegion,
  useAsync,
  useLiveResource,
  useNow,
  When,
  useConfirmFocus,
} from '../ui.js';
import {
  bankToday,
  FundingCard,
  notReversible,
  ReversalBadge,
  ReversePayments,
  reversalWindowOf,
} from './money-back.js';
import { ProgressBar, RunStatusBadge } from './payrolls.js';
import {
  type Blocker,
  blockersByPerson,
  blockersOf,
  type DisbursementTotals,
  employeeIdsIn,
  fileAbsence,
  formatNewYork,
  isAwaitingApproval,
  isCancellable,
  isUnfinished,
  isUnpaid,
  loadRunNames,
  namesOfRemoved,
  saveBlob,
  statusLabel,
  timeLeft,
  withNames,
} from './runs-model.js';

/** One run: polled every second while pending or processing, with its progress, totals, history and paystubs. */
export function PayrollDetailPage({ payrollId }: { payrollId: string }) {
  const path = `/v1/payroll/${encodeURIComponent(payrollId)}`;
  const {
    data: payroll,
    set: setLive,
    loaded: run,
    pollError,
  } = useLiveResource<PayrollDetail>(path, (p) => isUnfinished(p.status));

  return (
    <>
      <p class="breadcrumb">
        <a href="#/payrolls">Payrolls</a> <span aria-hidden="true">›</span> <code>{payrollId}</code>
      </p>
      <PageTitle>Payroll run</PageTitle>
      <ErrorBox error={run.error} title="The run could not be loaded" />
      <ErrorBox error={pollError} title="Refreshing the run failed (retrying)" />
      {!payroll && run.loading && <p aria-live="polite">Loading…</p>}
      {payroll && <RunView payroll={payroll} onChange={setLive} />}
    </>
  );
}

/** The names of the people `ids` lists: the employees API's, else (removed since) the name on their last paystub. */
async function namesOf(ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const names = await loadRunNames(ids);
  const missing = [...new Set(ids)].filter((id) => !names.has(id));
  if (missing.length > 0) for (const [id, name] of await namesOfRemoved(missing)) names.set(id, name);
  return names;
}

function RunView({ payroll, onChange }: { payroll: PayrollDetail; onChange: (p: PayrollDetail) => void }) {
  const moving = isUnfinished(payroll.status);
  const awaiting = isAwaitingApproval(payroll.status);
  // What became of the last approval asked from this page: kept here, not in the approval section, so a refusal
  // that finds the run no longer awaiting approval (the section is gone with it) still says so.
  const [refusal, setRefusal] = useState<unknown>(null);
  const [approved, setApproved] = useState(false);
  const refusedBlockers =
    refusal instanceof ApiError && (refusal.code === 'payroll_blocked' || refusal.code === 'funding_hold')
      ? blockersOf(refusal.details)
      : [];
  // The people a failure, a finding or a blocker is about, and while it awaits approval everyone the run pays, by
  // name: one read per employee named, only when there are any.
  const mentioned = [
    ...employeeIdsIn(payroll.failure_reason),
    ...payroll.findings.flatMap((f) => [...(f.employee_id ? [f.employee_id] : []), ...employeeIdsIn(f.message)]),
    ...(awaiting ? payroll.employee_ids : []),
    ...(payroll.blockers ?? []).flatMap((b) => (b.employee_id ? [b.employee_id] : [])),
    ...refusedBlockers.flatMap((b) => (b.employee_id ? [b.employee_id] : [])),
  ];
  const names = useAsync(() => namesOf(mentioned), [[...new Set(mentioned)].join(' ')]);
  const nameMap = names.data ?? new Map<string, string>();
  const environment = environmentOf(readToken());
  return (
    <>
      <section class="card run-summary" aria-labelledby="run-status-title">
        <h2 id="run-status-title" class="sr-only">
          Status
        </h2>
        <div class="run-status">
          <code class="run-id">{payroll.payroll_id}</code>
          <RunStatusBadge status={payroll.status} />
          {payroll.type === 'off_cycle' && <span class="badge badge-neutral">off-cycle</span>}
        </div>
        <p role="status" aria-live="polite" class="run-status-text" data-testid="run-status">
          {awaiting
            ? 'Awaiting approval: nothing moves until a key other than the one that submitted it approves it.'
            : payroll.status === 'pending'
              ? `Waiting to be processed: ${payroll.progress.done} of ${payroll.progress.total} employees processed.`
              : moving
                ? `Processing: ${payroll.progress.done} of ${payroll.progress.total} employees processed so far (nothing is paid until the file is released).`
                : `This run is ${statusLabel(payroll.status).toLowerCase()}.`}
        </p>
        {!awaiting && <ProgressBar payroll={payroll} label="Payroll processing progress" />}
        {payroll.failure_reason && (
          <p class="alert alert-error" data-testid="failure-reason">
            Failure: {withNames(payroll.failure_reason, nameMap)}
          </p>
        )}
        {payroll.findings.length > 0 && (
          <div class="alert alert-error">
            <p>
              <strong>Compliance findings</strong>
            </p>
            <ul>
              {payroll.findings.map((f, i) => (
                <li key={i}>
                  {f.employee_id && <strong>{nameMap.get(f.employee_id) ?? f.employee_id}: </strong>}
                  {withNames(f.message, nameMap)} <code>{f.code}</code>
                  {f.employee_id && nameMap.has(f.employee_id) && (
                    <span class="small muted">
                      {' '}
                      (<code>{f.employee_id}</code>)
                    </span>
                  )}
                </li>
              ))}
            </ul>
          </div>
        )}
        <dl class="facts">
          <div>
            <dt>Pay period</dt>
            <dd>{formatPeriod(payroll.pay_period_start, payroll.pay_period_end)}</dd>
          </div>
          <div>
            <dt>Pay date</dt>
            <dd>{formatDate(payroll.pay_date)}</dd>
          </div>
          <div>
            <dt>Settles</dt>
            <dd>{formatDate(payroll.effective_entry_date)}</dd>
          </div>
          <div>
            <dt>File due at the bank</dt>
            <dd>{formatDate(payroll.release_by)}</dd>
          </div>
          <div>
            <dt>Employees</dt>
            <dd>{payroll.employee_count}</dd>
          </div>
          <div>
            <dt>Submitted</dt>
            <dd>{formatDateTime(payroll.created_at)}</dd>
          </div>
          {payroll.submitted_by && (
            <div>
              <dt>Submitted by key</dt>
              <dd class="break">
                <code>{payroll.submitted_by.api_key_id}</code>
              </dd>
            </div>
          )}
          {payroll.approved_by && (
            <div data-testid="approved-by">
              <dt>Approved by key</dt>
              <dd class="break">
                <code>{payroll.approved_by.api_key_id}</code>{' '}
                <span class="small muted">{formatDateTime(payroll.approved_by.at)}</span>
              </dd>
            </div>
          )}
        </dl>
      </section>

      {approved && !awaiting && <ApprovedNotice status={payroll.status} />}
      {refusal !== null && !awaiting && <ApprovalRefusal error={refusal} names={nameMap} stillAwaiting={false} />}
      {awaiting && (
        <Approval
          payroll={payroll}
          names={nameMap}
          namesLoading={names.loading && !names.data}
          onApproved={(p) => {
            setRefusal(null);
            setApproved(true);
            onChange(p);
          }}
          onRefused={(err, p) => {
            setRefusal(err);
            if (p) onChange(p);
          }}
          onAsked={() => setRefusal(null)}
          refusal={refusal !== null && <ApprovalRefusal error={refusal} names={nameMap} stillAwaiting />}
          cancel={
            isCancellable(payroll.status, environment) && <CancelRun payroll={payroll} nested onCancelled={onChange} />
          }
        />
      )}

      {payroll.funding && <FundingCard payroll={{ ...payroll, funding: payroll.funding }} onChange={onChange} />}

      <section aria-labelledby="totals-title">
        <h2 id="totals-title">Totals</h2>
        <dl class="totals" data-testid="totals">
          <div>
            <dt>Gross pay</dt>
            <dd>{formatMoney(payroll.totals.gross_pay)}</dd>
          </div>
          <div>
            <dt>Bonuses</dt>
            <dd>{formatMoney(payroll.totals.bonuses)}</dd>
          </div>
          <div>
            <dt>Deductions</dt>
            <dd>{formatMoney(payroll.totals.deductions)}</dd>
          </div>
          <div class="total-net">
            <dt>Net pay</dt>
            <dd>{formatMoney(payroll.totals.net_pay)}</dd>
          </div>
        </dl>
        <BankFile payroll={payroll} />
        {payroll.status === 'completed' && (payroll.disbursement || payroll.returns.count > 0) && (
          <p class={payroll.returns.count > 0 ? 'alert alert-warn' : 'muted small'} data-testid="returns">
            {payroll.returns.count > 0 ? (
              <>
                <strong>
                  Returned by the bank: {payroll.returns.count} deposit{payroll.returns.count === 1 ? '' : 's'},{' '}
                  {formatMoney(payroll.returns.amount)}.
                </strong>{' '}
                The wages stay earned and their paystubs issued: only the deposit failed. Pay the employee again (for
                example by an off-cycle run) once their bank account is fixed.
              </>
            ) : (
              'No deposit returned by the bank.'
            )}
          </p>
        )}
        {payroll.reversals.count > 0 && (
          <p class="alert alert-warn" data-testid="reversals">
            <strong>
              Reversed: {payroll.reversals.count} payment{payroll.reversals.count === 1 ? '' : 's'},{' '}
              {formatMoney(payroll.reversals.amount)}.
            </strong>{' '}
            Reversal files debit the employees’ accounts for what was deposited; their paystubs are voided.
          </p>
        )}
      </section>

      {payroll.returns.count > 0 && <ReturnedPayments payrollId={payroll.payroll_id} count={payroll.returns.count} />}

      <section aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        <ol class="timeline">
          {payroll.status_history.map((h, i) => (
            <li key={i}>
              <RunStatusBadge status={h.status} /> <span class="small">{formatDateTime(h.at)}</span>
              {h.reason && <span class="small muted"> — {h.reason}</span>}
            </li>
          ))}
        </ol>
      </section>

      {!moving && !awaiting && (
        <Paystubs
          payrollId={payroll.payroll_id}
          status={payroll.status}
          onPaymentsMoved={async () => {
            // The run's tally of reversals changed with them: read it again.
            try {
              const { data } = await api<PayrollDetail>('GET', `/v1/payroll/${encodeURIComponent(payroll.payroll_id)}`);
              onChange(data);
            } catch {
              // The reversal stands; the run's totals catch up at the next read.
            }
          }}
        />
      )}

      {!awaiting && isCancellable(payroll.status, environment) && (
        <CancelRun payroll={payroll} onCancelled={onChange} />
      )}
    </>
  );
}

/** A person a blocker is about: their name, linked to their page (a removed employee's says so there). */
function Person({ id, names }: { id: string; names: Map<string, string> }) {
  const name = names.get(id);
  return (
    <>
      <a href={`#/employees/${encodeURIComponent(id)}`}>{name ?? <code>{id}</code>}</a>
      {name && (
        <span class="small muted">
          {' '}
          (<code>{id}</code>)
        </span>
      )}
    </>
  );
}

/** What to do about a blocker, beyond what the API says it is. */
function BlockerHint({ blocker }: { blocker: Blocker }) {
  switch (blocker.code) {
    case 'employee_not_found':
      return <>Removed since the run was submitted: cancel the run and submit it again without them.</>;
    case 'missing_bank_account':
      return <>Their bank account was invalidated or removed since: set a new one on their page.</>;
    case 'originator_not_configured':
      return (
        <>
          Replace the placeholder in <a href="#/settings">Settings</a>.
        </>
      );
    case 'funding_hold':
      return blocker.payroll_id ? (
        <>
          Re-debit the returned debit or record its payment by wire on{' '}
          <a href={`#/payrolls/${encodeURIComponent(blocker.payroll_id)}`}>the run’s page</a>.
        </>
      ) : null;
    case 'approval_deadline_passed':
      return blocker.earliest_pay_date ? (
        <>Submit the run again with a pay date on or after {formatDate(blocker.earliest_pay_date)}.</>
      ) : null;
    default:
      return null;
  }
}

/** Every blocker, by the person it is about (name linked to their page), then those of the run itself. */
function BlockerList({ blockers, names, testId }: { blockers: Blocker[]; names: Map<string, string>; testId: string }) {
  return (
    <ul class="runs-blockers" data-testid={testId}>
      {blockersByPerson(blockers).map((group) => (
        <li key={group.employeeId ?? 'run'} class="runs-blocker-group" data-employee-id={group.employeeId ?? undefined}>
          {group.employeeId ? <Person id={group.employeeId} names={names} /> : <strong>The run</strong>}
          <ul>
            {group.blockers.map((b, i) => (
              <li key={i}>
                {withNames(b.message, names)} <code>{b.code}</code>
                {b.field && (
                  <>
                    {' '}
                    (<code>{b.field}</code>)
                  </>
                )}{' '}
                <span class="small">
                  <BlockerHint blocker={b} />
                </span>
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}

/**
 * An approval the API refused, with its own message: the approving key submitted the run (403, dual control), what
 * blocks it (422, each blocker by person), or the run is no longer awaiting approval (409). It takes focus, since the
 * button pressed may be gone with the section.
 */
function ApprovalRefusal({
  error,
  names,
  stillAwaiting,
}: {
  error: unknown;
  names: Map<string, string>;
  stillAwaiting: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!stillAwaiting) ref.current?.focus();
  }, [error, stillAwaiting]);
  if (!(error instanceof ApiError) || ![403, 409, 422].includes(error.status) || error.code === 'insufficient_scope')
    return <ErrorBox error={error} title="The run was not approved" />;
  const blockers = error.code === 'payroll_blocked' || error.code === 'funding_hold' ? blockersOf(error.details) : [];
  return (
    <div class="alert alert-error" role="alert" data-testid="approval-refused" tabIndex={-1} ref={ref}>
      <p class="alert-title">
        <strong>The run was not approved:</strong> {error.message}{' '}
        <span class="muted">
          ({error.status} {error.code})
        </span>
      </p>
      {error.code === 'approver_is_submitter' && (
        <p class="small">
          Dual control: the key that submitted a run cannot approve it. Sign in with another admin key to approve it.
        </p>
      )}
      {error.status === 409 && (
        <p class="small" data-testid="not-awaiting">
          This run is no longer awaiting approval{stillAwaiting ? '' : ': its status is shown above'}. It was approved
          or cancelled since this page read it.
        </p>
      )}
      {blockers.length > 0 && (
        <>
          <p class="small">
            {blockers.length === 1 ? 'One thing blocks' : `${blockers.length} things block`} the run: resolve{' '}
            {blockers.length === 1 ? 'it' : 'each'}, then approve again.
          </p>
          <BlockerList blockers={blockers} names={names} testId="refused-blockers" />
        </>
      )}
      {error.requestId && (
        <p class="muted small">
          Request id: <code>{error.requestId}</code>
        </p>
      )}
    </div>
  );
}

/** Said once an approval from this page went through; it takes focus from the Approve button, which is gone. */
function ApprovedNotice({ status }: { status: string }) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <p class="alert alert-ok" data-testid="approved" tabIndex={-1} ref={ref}>
      Approved. The run is {statusLabel(status).toLowerCase()}
      {isUnfinished(status) ? ': this page follows it as it is processed.' : '.'}
    </p>
  );
}

/**
 * A run awaiting approval: what will move if it is approved (the debit, its date, the people paid), what blocks it,
 * and the approval itself (`POST …/approve`), which a key other than the submitter's must give.
 */
function Approval({
  payroll,
  names,
  namesLoading,
  onApproved,
  onRefused,
  onAsked,
  refusal,
  cancel,
}: {
  payroll: PayrollDetail;
  names: Map<string, string>;
  namesLoading: boolean;
  onApproved: (p: PayrollDetail) => void;
  onRefused: (err: unknown, p: PayrollDetail | null) => void;
  onAsked: () => void;
  /** The last refusal, shown next to the button that asked. */
  refusal: ComponentChildren;
  /** Cancelling instead, offered next to approving. */
  cancel: ComponentChildren;
}) {
  const settings = useAsync(async () => (await api<Settings>('GET', '/v1/settings')).data, []);
  const [busy, setBusy] = useState(false);
  const inFlight = useRef(false);
  const now = useNow(30_000);
  const environment = environmentOf(readToken());
  const blockers = payroll.blockers ?? [];
  const funding = settings.data?.funding_account ?? null;
  const path = `/v1/payroll/${encodeURIComponent(payroll.payroll_id)}`;
  const removed = new Set(blockers.filter((b) => b.code === 'employee_not_found').map((b) => b.employee_id));

  const approve = async () => {
    if (inFlight.current) return;
    inFlight.current = true;
    setBusy(true);
    onAsked();
    try {
      await api('POST', `${path}/approve`);
      // The approval answers the run's summary; the page shows its detail, and follows it from here.
      const { data } = await api<PayrollDetail>('GET', path);
      onApproved(data);
    } catch (err) {
      // The run as it is now: its blockers (422) or its new status (409) are shown with the refusal.
      let current: PayrollDetail | null = null;
      if (err instanceof ApiError && (err.status === 409 || err.status === 422))
        current = await api<PayrollDetail>('GET', path).then(
          (r) => r.data,
          () => null,
        );
      onRefused(err, current);
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };

  return (
    <section class="card runs-approval" aria-labelledby="approval-title" data-testid="approval">
      <h2 id="approval-title">Approval</h2>
      <p>
        Nothing has moved yet: no file, no paystub, no deposit. Approving it releases the run to be processed, and the
        debit below is drawn. A key other than the one that submitted it must approve it (dual control).
      </p>
      <h3 class="h3">What will move</h3>
      <dl class="facts" data-testid="will-move">
        <div>
          <dt>Debit total</dt>
          <dd data-testid="debit-total">{formatMoney(payroll.totals.net_pay)}</dd>
          <dd class="small muted" data-testid="debit-account">
            {funding
              ? `from the funding account ${funding.account_type} ••••${funding.account_number_last4}`
              : settings.data
                ? 'No funding account: the file carries the credits only'
                : settings.error
                  ? 'The funding account could not be read'
                  : '…'}
          </dd>
        </div>
        <div>
          <dt>Effective entry date</dt>
          <dd data-testid="effective-entry-date">{formatDate(payroll.effective_entry_date)}</dd>
        </div>
        <div>
          <dt>Release by</dt>
          <dd data-testid="release-by">{formatDate(payroll.release_by)}</dd>
        </div>
        <div>
          <dt>Approve by</dt>
          {payroll.approve_by ? (
            <dd data-testid="approve-by">
              <time dateTime={payroll.approve_by} title={formatDateTime(payroll.approve_by)}>
                {formatNewYork(payroll.approve_by)}
              </time>{' '}
              <span class="nowrap" data-testid="time-left">
                ({timeLeft(payroll.approve_by, now, environment)})
              </span>
            </dd>
          ) : (
            <dd data-testid="approve-by">—</dd>
          )}
        </div>
      </dl>

      <h3 class="h3" id="approval-people-title">
        Employees paid ({payroll.employee_ids.length})
      </h3>
      <p class="small muted" data-testid="per-employee-note">
        What each person will be paid, as accepted: {formatMoney(payroll.totals.net_pay)} net for all of them.
      </p>
      {namesLoading && <p class="small muted">Loading the employees’ names…</p>}
      <ul class="runs-people" aria-labelledby="approval-people-title" data-testid="run-employees">
        {(payroll.net_pay_by_employee ?? payroll.employee_ids.map((id) => ({ employee_id: id, net_pay: null }))).map(
          ({ employee_id: id, net_pay }) => (
            <li key={id} class="runs-person" data-employee-id={id}>
              <a href={`#/employees/${encodeURIComponent(id)}`}>{names.get(id) ?? <code>{id}</code>}</a>
              {net_pay !== null && (
                <span class="num" data-testid="employee-net-pay">
                  {' '}
                  {formatMoney(net_pay)}
                </span>
              )}
              {removed.has(id) && <span class="badge badge-bad">removed</span>}
            </li>
          ),
        )}
      </ul>

      <h3 class="h3">Blockers</h3>
      {blockers.length === 0 ? (
        <p data-testid="no-blockers">Nothing blocks this run: it can be approved.</p>
      ) : (
        <div class="alert alert-warn" data-testid="blockers">
          <p>
            <strong>
              {blockers.length === 1 ? 'One thing blocks' : `${blockers.length} things block`} this run: approving it is
              refused until {blockers.length === 1 ? 'it is' : 'each is'} resolved.
            </strong>
          </p>
          <BlockerList blockers={blockers} names={names} testId="blocker-list" />
        </div>
      )}

      <h3 class="h3">Approve</h3>
      {refusal}
      <div class="form-actions">
        <button type="button" class="button button-primary" onClick={approve} disabled={busy}>
          {busy ? 'Approving…' : 'Approve this run'}
        </button>
      </div>
      {cancel}
    </section>
  );
}

/**
 * The run's NACHA file: for a completed run its control totals (`GET …/disbursement`, JSON) and a download of the
 * file itself (`text/plain`, saved as `<payroll_id>.ach`); for any other run, plainly why there is none.
 */
function BankFile({ payroll }: { payroll: PayrollDetail }) {
  const path = `/v1/payroll/${encodeURIComponent(payroll.payroll_id)}/disbursement`;
  const completed = payroll.status === 'completed';
  const totals = useAsync(
    async () => (completed ? (await api<DisbursementTotals>('GET', path)).data : null),
    [path, completed],
  );
  const [downloading, setDownloading] = useState(false);
  const [downloadError, setDownloadError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const absence = fileAbsence(payroll.status);

  const download = async () => {
    setDownloading(true);
    setDownloadError(null);
    try {
      const blob = await apiBlob(path, 'text/plain');
      saveBlob(new Blob([blob], { type: 'text/plain' }), `${payroll.payroll_id}.ach`);
      setSaved(true);
    } catch (err) {
      setDownloadError(err);
    } finally {
      setDownloading(false);
    }
  };

  if (!completed) {
    const planned = payroll.disbursement;
    return (
      <div
        class={isUnpaid(payroll.status) ? 'alert alert-warn' : 'muted small'}
        data-testid="disbursement"
        data-file="none"
      >
        <p>
          <strong>{absence}</strong>
        </p>
        {planned && isUnpaid(payroll.status) && (
          <p class="small">
            The file had been prepared for {planned.entry_count} entries ({formatMoney(planned.total_credit)}): it is
            withdrawn, and none of it was credited.
          </p>
        )}
      </div>
    );
  }
  const t = totals.data;
  const error = totals.error;
  return (
    <section class="card runs-file" aria-labelledby="file-title" data-testid="disbursement" data-file="ready">
      <h3 id="file-title">NACHA file</h3>
      {error instanceof ApiError && (error.status === 409 || error.status === 410) ? (
        <p>
          <strong>{error.status === 409 ? 'No NACHA file' : 'NACHA file withdrawn'}:</strong> {error.message}
        </p>
      ) : (
        <ErrorBox error={error} title="The file's control totals could not be loaded" />
      )}
      {totals.loading && !t && <p aria-live="polite">Loading the file's control totals…</p>}
      {t && (
        <>
          <p data-testid="file-summary">
            File {t.file_id_modifier}: {t.entry_count} entr{t.entry_count === 1 ? 'y' : 'ies'},{' '}
            {formatMoney(t.total_credit)} to credit to employees
            {t.total_debit > 0 ? `, ${formatMoney(t.total_debit)} debited from the funding account` : ''}; settles{' '}
            {formatDate(t.effective_entry_date)}.
          </p>
          <dl class="facts" data-testid="file-totals">
            <div>
              <dt>Entries</dt>
              <dd>{t.entry_count}</dd>
            </div>
            <div>
              <dt>Total credit</dt>
              <dd>{formatMoney(t.total_credit)}</dd>
            </div>
            <div>
              <dt>Total debit</dt>
              <dd>{formatMoney(t.total_debit)}</dd>
            </div>
            <div>
              <dt>Batches</dt>
              <dd>{t.batch_count}</dd>
            </div>
            <div>
              <dt>Blocks</dt>
              <dd>{t.block_count}</dd>
            </div>
            <div>
              <dt>Entry hash</dt>
              <dd>
                <code>{t.entry_hash}</code>
              </dd>
            </div>
            <div>
              <dt>File ID modifier</dt>
              <dd>
                <code>{t.file_id_modifier}</code>
              </dd>
            </div>
            <div>
              <dt>Written</dt>
              <dd>{formatDateTime(t.created_at)}</dd>
            </div>
          </dl>
          <p>
            <button type="button" class="button button-primary" onClick={download} disabled={downloading}>
              {downloading ? 'Downloading…' : `Download the NACHA file (${payroll.payroll_id}.ach)`}
            </button>
          </p>
          <p class="small muted">
            The file holds the employees' full account numbers: keep it where only the people who send it to the bank
            can read it.
          </p>
          {saved && (
            <p class="small" role="status">
              Saved as <code>{payroll.payroll_id}.ach</code>.
            </p>
          )}
        </>
      )}
      <ErrorBox error={downloadError} title="The file could not be downloaded" />
    </section>
  );
}

/**
 * Cancels a run after an explicit confirmation: one awaiting approval in any environment (it moved nothing), one past
 * approval (pending, processing, completed) in the sandbox only.
 */
function CancelRun({
  payroll,
  nested = false,
  onCancelled,
}: {
  payroll: PayrollDetail;
  /** Inside the approval section of a run awaiting approval (any environment), under a heading of its level. */
  nested?: boolean;
  onCancelled: (p: PayrollDetail) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const { confirmRef, askRef } = useConfirmFocus(confirming);
  const cancel = async () => {
    setBusy(true);
    setError(null);
    try {
      const path = `/v1/payroll/${encodeURIComponent(payroll.payroll_id)}`;
      await api('POST', `${path}/cancel`);
      // The cancel answers the run's summary; the page shows its detail (history, findings, returns): read it again.
      const { data } = await api<PayrollDetail>('GET', path);
      setConfirming(false);
      onCancelled(data);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="cancel-title" class="runs-cancel">
      {nested ? (
        <h3 id="cancel-title" class="h3">
          Or cancel it
        </h3>
      ) : (
        <h2 id="cancel-title">Cancel this run (sandbox)</h2>
      )}
      <ErrorBox error={error} title="The run could not be cancelled" />
      {confirming ? (
        <div class="alert alert-warn" role="alertdialog" aria-labelledby="cancel-confirm-text">
          {isAwaitingApproval(payroll.status) ? (
            <p id="cancel-confirm-text">
              Cancel run <code>{payroll.payroll_id}</code>? It moved nothing: it ends cancelled, unapproved, and its pay
              period is freed. This cannot be undone.
            </p>
          ) : (
            <p id="cancel-confirm-text">
              Cancel run <code>{payroll.payroll_id}</code>? Its {payroll.employee_count} paystub
              {payroll.employee_count === 1 ? '' : 's'} become voided, its file is withdrawn and its pay period is
              freed. This cannot be undone.
            </p>
          )}
          <div class="form-actions">
            <button type="button" class="button button-danger" onClick={cancel} disabled={busy} ref={confirmRef}>
              {busy ? 'Cancelling…' : 'Yes, cancel the run'}
            </button>
            <button type="button" class="button" onClick={() => setConfirming(false)} disabled={busy}>
              Keep it
            </button>
          </div>
        </div>
      ) : (
        <p>
          <button type="button" class="button button-danger" onClick={() => setConfirming(true)} ref={askRef}>
            Cancel this run…
          </button>
        </p>
      )}
    </section>
  );
}

const byName = new Intl.Collator('en-US', { sensitivity: 'base', numeric: true });

/** The run's paystubs are searched up to this many for its returned payments: the API has no filter for them. */
const RETURN_SEARCH_LIMIT = 5000;

/** The run's returned payments, found by reading its paystubs page by page until all `count` of them are found. */
async function loadReturned(payrollId: string, count: number): Promise<{ returned: Paystub[]; complete: boolean }> {
  const returned: Paystub[] = [];
  let read = 0;
  let next: string | null = null;
  do {
    const page: Page<Paystub> = await listPage<Paystub>('/v1/paystubs', 'paystubs', {
      payroll_id: payrollId,
      limit: 100,
      page_token: next,
    });
    read += page.items.length;
    returned.push(...page.items.filter((p) => p.payment?.return || p.payment?.status === 'returned'));
    next = page.next_page_token;
  } while (next && returned.length < count && read < RETURN_SEARCH_LIMIT);
  return { returned, complete: returned.length >= count || next === null };
}

function ReturnedPayments({ payrollId, count }: { payrollId: string; count: number }) {
  const list = useAsync(() => loadReturned(payrollId, count), [payrollId, count]);
  const items = list.data?.returned ?? [];
  return (
    <section aria-labelledby="returns-title">
      <h2 id="returns-title">Returned payments</h2>
      <ErrorBox error={list.error} title="The returned payments could not be loaded" />
      {list.loading && !list.data && <p aria-live="polite">Loading the returned payments…</p>}
      {list.data && !list.data.complete && (
        <p class="small muted">
          Only the first {RETURN_SEARCH_LIMIT} paystubs of the run were searched: {items.length} of {count} returned
          payments shown.
        </p>
      )}
      {items.length > 0 && (
        <TableRegion label="Returned payments of this run">
          <table class="table responsive" data-testid="returns-table">
            <thead>
              <tr>
                <th scope="col">Employee</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col">Account</th>
                <th scope="col">Return</th>
                <th scope="col">Returned</th>
              </tr>
            </thead>
            <tbody>
              {items.map((p) => (
                <tr key={p.paystub_id}>
                  <td data-label="Employee">
                    <strong>{p.employee_name}</strong>
                    <div class="small muted">
                      <code>{p.employee_id}</code>
                    </div>
                  </td>
                  <td data-label="Amount" class="num">
                    {formatMoney(p.net_pay)}
                  </td>
                  <td data-label="Account" class="small">
                    {p.payment.account_type} ••{p.payment.account_number_last4}
                    {p.payment.trace_number && (
                      <div class="muted">
                        trace <code>{p.payment.trace_number}</code>
                      </div>
                    )}
                  </td>
                  <td data-label="Return">
                    {p.payment.return ? (
                      <>
                        <span class="badge badge-bad">{p.payment.return.code}</span> {p.payment.return.reason}
                      </>
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                  <td data-label="Returned" class="nowrap">
                    <When iso={p.payment.return?.returned_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </section>
  );
}

/**
 * The run's paystubs, by name. On a processed run each payment in the bank file can be selected for reversal (those
 * returned, reversed, out of their window or paying nothing cannot), and reversed below the list.
 */
function Paystubs({
  payrollId,
  status,
  onPaymentsMoved,
}: {
  payrollId: string;
  status: string;
  /** Payments were reversed, here or (a refusal says so) elsewhere: the run's tally changed. */
  onPaymentsMoved: () => void;
}) {
  const [pages, setPages] = useState<Page<Paystub> | null>(null);
  const [pdfError, setPdfError] = useState<unknown>(null);
  const [opening, setOpening] = useState<string | null>(null);
  const [opened, setOpened] = useState<{ name: string; file: string; url: string } | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const stubs = useAsync(async () => {
    const page = await listPage<Paystub>('/v1/paystubs', 'paystubs', { payroll_id: payrollId, limit: 100 });
    setPages(page);
    return page;
  }, [payrollId, status]);
  const reversible = status === 'completed';
  const today = bankToday();

  // Blob URLs hold the PDF in memory until revoked: keep the last one, let go of it when the page goes.
  useEffect(
    () => () => {
      if (opened) URL.revokeObjectURL(opened.url);
    },
    [opened],
  );

  const openPdf = async (p: Paystub) => {
    setPdfError(null);
    setOpening(p.paystub_id);
    // Opened before the request so the browser counts it as the click's own window, not a pop-up.
    const win = window.open('', '_blank');
    try {
      const blob = await apiBlob(`/v1/paystubs/${encodeURIComponent(p.paystub_id)}`, 'application/pdf');
      const url = URL.createObjectURL(new Blob([blob], { type: 'application/pdf' }));
      setOpened({ name: p.employee_name, file: paystubFileName(p), url });
      if (win) win.location.href = url;
    } catch (err) {
      win?.close();
      setPdfError(err);
    } finally {
      setOpening(null);
    }
  };

  const more = async () => {
    if (!pages?.next_page_token) return;
    const page = await listPage<Paystub>('/v1/paystubs', 'paystubs', {
      payroll_id: payrollId,
      limit: 100,
      page_token: pages.next_page_token,
    });
    setPages({ items: [...pages.items, ...page.items], next_page_token: page.next_page_token });
  };

  // By name, as people look a colleague up (the API pages them by id): the pages loaded so far, sorted together.
  const items = [...(pages?.items ?? [])].sort(
    (a, b) => byName.compare(a.employee_name, b.employee_name) || a.paystub_id.localeCompare(b.paystub_id),
  );
  // Only what can still be reversed stays selected (a list read again may find a payment reversed or returned since).
  const chosen = items.filter((p) => selected.has(p.paystub_id) && notReversible(p, today) === null);
  const toggle = (id: string, on: boolean) =>
    setSelected((old) => {
      const next = new Set(old);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  return (
    <section aria-labelledby="paystubs-title">
      <h2 id="paystubs-title">Paystubs</h2>
      {pages?.next_page_token && (
        <p class="small muted">Sorted by name among the {items.length} loaded; load more to sort the rest in.</p>
      )}
      <ErrorBox error={stubs.error} title="The paystubs could not be loaded" />
      <ErrorBox error={pdfError} title="The PDF could not be opened" />
      {opened && (
        <p class="small" role="status">
          Opened the paystub of {opened.name} in a new tab.{' '}
          <a href={opened.url} target="_blank" rel="noopener">
            Open it again
          </a>{' '}
          or{' '}
          <a href={opened.url} download={opened.file}>
            download it
          </a>
          .
        </p>
      )}
      {pages && items.length === 0 && <p>No paystub for this run.</p>}
      {items.length > 0 && (
        <TableRegion label="Paystubs of this run">
          <table class="table responsive" data-testid="paystub-table">
            <thead>
              <tr>
                {reversible && (
                  <th scope="col">
                    <span class="sr-only">Select for reversal</span>
                  </th>
                )}
                <th scope="col">Employee</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Hours
                </th>
                <th scope="col" class="num">
                  Gross
                </th>
                <th scope="col" class="num">
                  Deductions
                </th>
                <th scope="col" class="num">
                  Net pay
                </th>
                <th scope="col">Deposit</th>
                <th scope="col">
                  <span class="sr-only">PDF</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((p) => {
                const why = reversible ? notReversible(p, today) : null;
                const window = reversible && p.payment?.status === 'scheduled' ? reversalWindowOf(p, today) : null;
                return (
                  <tr key={p.paystub_id} data-paystub-id={p.paystub_id} data-payment-status={p.payment?.status}>
                    {reversible && (
                      <td data-label="Reverse" class="money-select">
                        <input
                          type="checkbox"
                          class="money-check"
                          checked={why === null && selected.has(p.paystub_id)}
                          disabled={why !== null}
                          aria-label={
                            why === null
                              ? `Select the payment of ${p.employee_name} for reversal`
                              : `The payment of ${p.employee_name} cannot be reversed: ${why}`
                          }
                          title={why ?? undefined}
                          onChange={(e) => toggle(p.paystub_id, (e.currentTarget as HTMLInputElement).checked)}
                        />
                      </td>
                    )}
                    <td data-label="Employee">
                      <strong>{p.employee_name}</strong>
                      <div class="small muted">
                        <code>{p.paystub_id}</code>
                      </div>
                    </td>
                    <td data-label="Status">
                      <StatusBadge status={p.status} />
                    </td>
                    <td data-label="Hours" class="num">
                      {p.hours_worked}
                    </td>
                    <td data-label="Gross" class="num">
                      {formatMoney(p.gross_pay + p.bonuses)}
                    </td>
                    <td data-label="Deductions" class="num">
                      {formatMoney(p.deductions.total)}
                    </td>
                    <td data-label="Net pay" class="num">
                      <strong>{formatMoney(p.net_pay)}</strong>
                    </td>
                    <td data-label="Deposit" class="small">
                      {p.payment?.account_number_last4
                        ? `${p.payment.account_type} ••${p.payment.account_number_last4}`
                        : '—'}
                      {p.payment?.status === 'returned' ? (
                        <div>
                          <StatusBadge status="returned" />
                          {p.payment.return && <span class="muted"> {p.payment.return.code}</span>}
                        </div>
                      ) : p.payment?.reversal ||
                        p.payment?.status === 'reversal_scheduled' ||
                        p.payment?.status === 'reversal_returned' ? (
                        <ReversalBadge p={p} />
                      ) : (
                        <div class="muted">{p.payment?.status}</div>
                      )}
                      {p.payment?.effective_entry_date && (
                        <div class="muted nowrap">settles {formatDate(p.payment.effective_entry_date)}</div>
                      )}
                      {window && (
                        <div class={window.open ? 'muted nowrap' : 'nowrap'} data-testid="reversible-until">
                          {window.open
                            ? `reversible until ${formatDate(window.ends)}`
                            : `reversal window closed ${formatDate(window.ends)}`}
                        </div>
                      )}
                    </td>
                    <td data-label="PDF" class="actions">
                      <button
                        type="button"
                        class="button"
                        onClick={() => openPdf(p)}
                        disabled={opening === p.paystub_id}
                        aria-label={`Open the PDF paystub of ${p.employee_name}`}
                      >
                        {opening === p.paystub_id ? 'Opening…' : 'PDF'}
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableRegion>
      )}
      <LoadMore
        next={pages?.next_page_token ?? null}
        loading={stubs.loading}
        onClick={more}
        label="Load more paystubs"
      />
      {reversible && items.length > 0 && (
        <ReversePayments
          payrollId={payrollId}
          selected={chosen}
          today={today}
          onReversed={() => {
            // The payments' new status, and their paystubs voided: read the list again.
            setSelected(new Set());
            stubs.reload();
            onPaymentsMoved();
          }}
          onRefused={() => {
            stubs.reload();
            onPaymentsMoved();
          }}
        />
      )}
    </section>
  );
}
