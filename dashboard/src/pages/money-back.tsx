import { useEffect, useRef, useState } from 'preact/hooks';
import { BANK_TIME_ZONE, dateInTimeZone } from '../../../shared/domain/banking-calendar.js';
import { REDEBITABLE_CODES, reversalWindowEnds } from '../../../shared/domain/money-back.js';
import { ApiError, api } from '../api.js';
import { withQuery } from '../router.js';
import {
  type DisbursementFileType,
  type Funding,
  type FundingHold,
  type FundingStatus,
  fundingHoldOf,
  MAX_REVERSAL_PAYMENTS,
  type PaymentStatus,
  type PayrollDetail,
  type PayrollFunding,
  type Paystub,
  REVERSAL_REASONS,
  REVERSAL_WINDOW_BANKING_DAYS,
  type Reversal,
  type ReversalReason,
  type Settings,
} from '../types.js';
import {
  ErrorBox,
  Field,
  fieldProblems,
  formatDate,
  formatDateTime,
  formatMoney,
  formValue,
  StatusBadge,
  TableRegion,
  useAsync,
  When,
  useConfirmFocus,
} from '../ui.js';
import { newIdempotencyKey } from './runs-model.js';

/**
 * Money back in the console (CONTRACT §12): the files the service wrote, a run's funding debit and what became of it
 * (returned, re-debited, paid by wire), the organization's funding hold, and reversals of payments made in error.
 */

// ---- Words ----------------------------------------------------------------------------------------------------------

/** What each kind of file is called. */
export const FILE_TYPE_LABELS: Record<DisbursementFileType, string> = {
  payroll: 'Payroll',
  redebit: 'Re-debit',
  reversal: 'Reversal',
  prenote: 'Prenote',
};

/** A file's status in plain words. */
export const FILE_STATUS_LABELS: Record<string, string> = {
  ready: 'ready to send',
  withdrawn: 'withdrawn',
  transmitted: 'transmitted',
  acknowledged: 'acknowledged',
};

export const REVERSAL_REASON_LABELS: Record<ReversalReason, string> = {
  duplicate: 'Duplicate: paid twice',
  incorrect_amount: 'Incorrect amount: paid the wrong amount',
  incorrect_account: 'Incorrect account: paid to the wrong account',
};
const reasonWord = (reason: string) => REVERSAL_REASON_LABELS[reason as ReversalReason]?.split(':')[0] ?? reason;

export const FUNDING_STATUS_LABELS: Record<FundingStatus, string> = {
  scheduled: 'Debit scheduled',
  returned: 'Returned by the bank',
  redebit_scheduled: 'Re-debit scheduled',
  resolved: 'Paid by other means',
};

/** A payment's status in plain words (the API's values otherwise). */
const PAYMENT_STATUS_LABELS: Partial<Record<PaymentStatus, string>> = {
  scheduled: 'in the bank file',
  no_payment: 'nothing to pay',
  reversal_scheduled: 'reversal scheduled',
  reversal_returned: 'reversal returned',
};
export const paymentStatusLabel = (status: string): string => PAYMENT_STATUS_LABELS[status as PaymentStatus] ?? status;

/** Why the API refused a re-debit (`details[0].reason` of 422 `redebit_not_allowed`), and what to do instead. */
const REDEBIT_REFUSALS: Record<string, string> = {
  no_funding_debit: 'The run’s file carried credits only: there is no funding debit to debit again.',
  not_returned: 'The debit is not returned, or it was re-debited or resolved already: reload the page to see it.',
  return_code:
    'NACHA allows debiting again only a debit returned R01 (insufficient funds) or R09 (uncollected funds): record a payment by wire instead.',
  limit_reached: 'The debit was debited again twice already, the most NACHA allows: record a payment by wire instead.',
  window_closed:
    'More than 180 days have passed since the debit’s effective entry date: record a payment by wire instead.',
};

// ---- The funding hold -----------------------------------------------------------------------------------------------

/** The organization's funding hold, read from the settings; none when they cannot be read (the page goes on). */
export function useFundingHold(): FundingHold | null {
  const settings = useAsync(
    () =>
      api<Settings>('GET', '/v1/settings').then(
        (r) => r.data,
        () => null,
      ),
    [],
  );
  return fundingHoldOf(settings.data);
}

/** While the organization is on a funding hold: which run's debit came back, and where to lift the hold. */
export function FundingHoldBanner({ hold }: { hold: FundingHold | null }) {
  if (!hold) return null;
  const run = `#/payrolls/${encodeURIComponent(hold.payroll_id)}`;
  return (
    <div class="alert alert-warn" data-testid="funding-hold">
      <p>
        <strong>Funding hold:</strong> the bank returned the funding debit of run{' '}
        <a href={run}>
          <code class="break">{hold.payroll_id}</code>
        </a>{' '}
        ({hold.code}) on {formatDateTime(hold.since)}. New payrolls and approvals are refused until it is re-debited or
        its payment by wire is recorded on <a href={run}>the run’s page</a>.
      </p>
    </div>
  );
}

/** A submission (or its dry run) refused for a funding hold: where the hold is lifted (the run its details name). */
export function FundingHoldRefusal({ error }: { error: unknown }) {
  if (!(error instanceof ApiError)) return null;
  const held = error.details.find((d) => d.code === 'funding_hold' && typeof d.payroll_id === 'string');
  if (!held) return null;
  const id = held.payroll_id as string;
  return (
    <p class="small" data-testid="funding-hold-refusal">
      The organization is on a funding hold: re-debit the returned debit of run{' '}
      <a href={`#/payrolls/${encodeURIComponent(id)}`}>
        <code class="break">{id}</code>
      </a>{' '}
      or record its payment by wire on its page, then submit again.
    </p>
  );
}

// ---- A run's funding --------------------------------------------------------------------------------------------------

const filesOf = (payrollId: string, type?: DisbursementFileType) =>
  `#${withQuery('/files', { payroll_id: payrollId, type })}`;

/** The funding debit of a run in a sentence: what it is now, and what it means. */
function fundingSentence(f: Funding): string {
  const amount = formatMoney(f.amount);
  switch (f.status) {
    case 'scheduled':
      return `The funding account is debited ${amount} to cover this run’s deposits; the debit settles ${formatDate(f.effective_entry_date)}.`;
    case 'returned':
      return `The bank returned the funding debit of ${amount}${f.return ? ` (${f.return.code}: ${f.return.reason})` : ''}: the deposits went out, but the money to cover them did not come in.`;
    case 'redebit_scheduled': {
      const last = f.redebits[f.redebits.length - 1];
      return `The returned debit was debited again (RETRY PYMT): ${amount}${last ? `, settling ${formatDate(last.effective_entry_date)}` : ''}. The funding hold is lifted; a return of the re-debit puts it back.`;
    }
    case 'resolved':
      return `The returned debit was paid by ${f.resolution?.method === 'wire' ? 'wire' : 'other means'}${f.resolution ? ` (reference ${f.resolution.reference})` : ''}. The funding hold is lifted.`;
    default:
      return '';
  }
}

/**
 * A balanced run's funding debit: its status in plain words, amount, trace, settlement, the bank's return, every
 * re-debit and the resolution. While it is returned, the hold it puts on the organization, and the two ways out: debit
 * it again (`POST …/funding/redebit`) or record its payment by wire (`POST …/funding/resolve`).
 */
export function FundingCard({
  payroll,
  onChange,
}: {
  payroll: PayrollDetail & { funding: Funding };
  onChange: (p: PayrollDetail) => void;
}) {
  const f = payroll.funding;
  const [notice, setNotice] = useState<string | null>(null);
  const noticeRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (notice) noticeRef.current?.focus();
  }, [notice]);
  const changed = (data: PayrollFunding, message: string) => {
    onChange({ ...payroll, funding: data.funding });
    setNotice(message);
  };
  return (
    <section class="card money-funding" aria-labelledby="funding-card-title" data-testid="funding">
      <h2 id="funding-card-title">Funding</h2>
      <p data-testid="funding-status">
        <StatusBadge status={f.status} label={FUNDING_STATUS_LABELS[f.status]} /> {fundingSentence(f)}
      </p>
      {notice && (
        <p class="alert alert-ok" data-testid="funding-notice" tabIndex={-1} ref={noticeRef}>
          {notice}
        </p>
      )}
      {f.status === 'returned' && (
        <div class="alert alert-warn" data-testid="funding-hold-explained">
          <p>
            <strong>The organization is on a funding hold:</strong> new payrolls and approvals are refused (422{' '}
            <code>funding_hold</code>) until this debit is debited again or its payment by other means (a wire) is
            recorded below.
          </p>
        </div>
      )}
      <dl class="facts" data-testid="funding-facts">
        <div>
          <dt>Amount</dt>
          <dd>{formatMoney(f.amount)}</dd>
        </div>
        <div>
          <dt>Trace number</dt>
          <dd class="break">
            <code>{f.trace_number}</code>
          </dd>
        </div>
        <div>
          <dt>Settles</dt>
          <dd>{formatDate(f.effective_entry_date)}</dd>
        </div>
        {f.return && (
          <div data-testid="funding-return">
            <dt>Returned</dt>
            <dd>
              <span class="badge badge-bad">{f.return.code}</span> {f.return.reason}
            </dd>
            <dd class="small muted">{formatDateTime(f.return.returned_at)}</dd>
          </div>
        )}
        {f.resolution && (
          <div data-testid="funding-resolution">
            <dt>Paid by</dt>
            <dd>
              {f.resolution.method === 'wire' ? 'Wire' : 'Other means'}, reference{' '}
              <code class="break">{f.resolution.reference}</code>
            </dd>
            <dd class="small muted">Recorded {formatDateTime(f.resolution.resolved_at)}</dd>
          </div>
        )}
      </dl>
      {f.redebits.length > 0 && <Redebits funding={f} payrollId={payroll.payroll_id} />}
      {f.status === 'returned' && (
        <>
          <Redebit
            payroll={payroll}
            onDone={(data) => {
              const last = data.funding.redebits[data.funding.redebits.length - 1];
              changed(
                data,
                `Re-debited: a RETRY PYMT file debits ${formatMoney(data.funding.amount)} from the funding account again${last ? `, settling ${formatDate(last.effective_entry_date)}` : ''}. The funding hold is lifted.`,
              );
            }}
          />
          <RecordPayment
            payroll={payroll}
            onDone={(data) =>
              changed(data, 'Recorded: the returned debit is paid by other means. The funding hold is lifted.')
            }
          />
        </>
      )}
      <p class="small">
        <a href={filesOf(payroll.payroll_id)}>The files of this run</a>
      </p>
    </section>
  );
}

function Redebits({ funding, payrollId }: { funding: Funding; payrollId: string }) {
  return (
    <>
      <h3 class="h3" id="redebits-title">
        Re-debits ({funding.redebits.length})
      </h3>
      <TableRegion label="Re-debits of the funding debit">
        <table class="table responsive" data-testid="redebits-table">
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Trace</th>
              <th scope="col" class="num">
                Amount
              </th>
              <th scope="col">Settles</th>
              <th scope="col">Written</th>
              <th scope="col">Return</th>
            </tr>
          </thead>
          <tbody>
            {funding.redebits.map((r) => (
              <tr key={r.trace_number}>
                <td data-label="File">
                  <a href={filesOf(payrollId, 'redebit')}>
                    <code class="id">{r.file_id}</code>
                  </a>
                </td>
                <td data-label="Trace">
                  <code class="id">{r.trace_number}</code>
                </td>
                <td data-label="Amount" class="num">
                  {formatMoney(r.amount)}
                </td>
                <td data-label="Settles" class="nowrap">
                  {formatDate(r.effective_entry_date)}
                </td>
                <td data-label="Written" class="nowrap">
                  <When iso={r.created_at} />
                </td>
                <td data-label="Return">
                  {r.return ? (
                    <>
                      <span class="badge badge-bad">{r.return.code}</span> {r.return.reason}
                    </>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableRegion>
    </>
  );
}

/** Debits the returned funding debit again, after a confirmation: it writes a file that moves money. */
function Redebit({
  payroll,
  onDone,
}: {
  payroll: PayrollDetail & { funding: Funding };
  onDone: (data: PayrollFunding) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const { confirmRef, askRef } = useConfirmFocus(confirming);
  const code = payroll.funding.return?.code;
  const redebitable = code !== undefined && REDEBITABLE_CODES.includes(code);
  const redebit = async () => {
    setBusy(true);
    setError(null);
    try {
      const { data } = await api<PayrollFunding>(
        'POST',
        `/v1/payroll/${encodeURIComponent(payroll.payroll_id)}/funding/redebit`,
      );
      setConfirming(false);
      onDone(data);
    } catch (err) {
      setConfirming(false);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="redebit-title">
      <h3 id="redebit-title" class="h3">
        Debit it again
      </h3>
      <p class="small">
        Writes a re-debit file (CCD, <code>RETRY PYMT</code>) debiting the same {formatMoney(payroll.funding.amount)}{' '}
        from the funding account, settling the next banking day; the hold is lifted. NACHA allows it for R01 and R09
        returns only, at most twice, within 180 days.
      </p>
      {!redebitable && code && (
        <p class="small" data-testid="redebit-hint">
          This debit was returned {code}: the API will refuse to debit it again. Record its payment by wire instead.
        </p>
      )}
      <RedebitRefusal error={error} />
      {confirming ? (
        <div class="alert alert-warn" role="alertdialog" aria-labelledby="redebit-confirm-text">
          <p id="redebit-confirm-text">
            Debit {formatMoney(payroll.funding.amount)} from the funding account again for run{' '}
            <code>{payroll.payroll_id}</code>? The file is written now and sent to the bank like any other.
          </p>
          <div class="form-actions">
            <button type="button" class="button button-primary" onClick={redebit} disabled={busy} ref={confirmRef}>
              {busy ? 'Re-debiting…' : 'Yes, re-debit'}
            </button>
            <button type="button" class="button" onClick={() => setConfirming(false)} disabled={busy}>
              Not now
            </button>
          </div>
        </div>
      ) : (
        <p>
          <button
            type="button"
            class="button button-primary"
            onClick={() => {
              setError(null);
              setConfirming(true);
            }}
            ref={askRef}
          >
            Re-debit…
          </button>
        </p>
      )}
    </section>
  );
}

/** A refused re-debit: the API's message, and its reason (`details[0].reason`) in plain words. */
function RedebitRefusal({ error }: { error: unknown }) {
  if (!(error instanceof ApiError) || error.code !== 'redebit_not_allowed')
    return <ErrorBox error={error} title="The debit was not debited again" />;
  const reason = typeof error.details[0]?.reason === 'string' ? error.details[0].reason : null;
  return (
    <div class="alert alert-error" role="alert" data-testid="redebit-refused">
      <p class="alert-title">
        <strong>The debit was not debited again:</strong> {error.message}{' '}
        <span class="muted">
          ({error.status} {error.code}
          {reason ? `, ${reason}` : ''})
        </span>
      </p>
      <p>{(reason && REDEBIT_REFUSALS[reason]) ?? error.details[0]?.message ?? ''}</p>
      {error.requestId && (
        <p class="muted small">
          Request id: <code>{error.requestId}</code>
        </p>
      )}
    </div>
  );
}

/** Records that the returned debit was paid another way (a wire), with its reference: the hold is lifted. */
function RecordPayment({
  payroll,
  onDone,
}: {
  payroll: PayrollDetail & { funding: Funding };
  onDone: (data: PayrollFunding) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const { problem, invalid } = fieldProblems(error);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setBusy(true);
    setError(null);
    try {
      const { data } = await api<PayrollFunding>(
        'POST',
        `/v1/payroll/${encodeURIComponent(payroll.payroll_id)}/funding/resolve`,
        {
          body: {
            method: formValue(form, 'method') === 'other' ? 'other' : 'wire',
            reference: formValue(form, 'reference'),
          },
        },
      );
      onDone(data);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="resolve-title">
      <h3 id="resolve-title" class="h3">
        Or record a wire
      </h3>
      <p class="small">
        When the organization paid the {formatMoney(payroll.funding.amount)} another way, record it with its reference:
        the hold is lifted and nothing is debited.
      </p>
      <ErrorBox error={error} title="The payment was not recorded" />
      <form class="form-grid" onSubmit={submit} noValidate>
        <Field id="resolve-method" label="Paid by">
          <select id="resolve-method" name="method" class="input" {...invalid('method', 'resolve-method')}>
            <option value="wire">Wire</option>
            <option value="other">Other means</option>
          </select>
          {problem('method', 'resolve-method')}
        </Field>
        <Field
          id="resolve-reference"
          label="Reference"
          hint="The wire’s reference (Fedwire IMAD) or the bank’s confirmation: up to 140 characters."
        >
          <input
            id="resolve-reference"
            name="reference"
            class="input mono"
            maxLength={140}
            autoComplete="off"
            spellcheck={false}
            {...invalid('reference', 'resolve-reference', true)}
          />
          {problem('reference', 'resolve-reference')}
        </Field>
        <div class="form-actions">
          <button type="submit" class="button" disabled={busy}>
            {busy ? 'Recording…' : 'Record the payment'}
          </button>
        </div>
      </form>
    </section>
  );
}

// ---- Reversals --------------------------------------------------------------------------------------------------------

/** Today at the bank (New York): what the API compares a reversal window's last day with. */
export const bankToday = (): string => dateInTimeZone(new Date(), BANK_TIME_ZONE).date;

/**
 * A payment's reversal window: its last day (the fifth banking day after the deposit settled, as the API counts it)
 * and whether it is still open today. Null for a payment that paid nothing.
 */
export function reversalWindowOf(p: Paystub, today: string): { ends: string; open: boolean } | null {
  if (p.payment.reversal) return { ends: p.payment.reversal.window_ends, open: false };
  if (!p.payment.trace_number) return null;
  const settled = p.payment.effective_entry_date ?? p.pay_date;
  try {
    const ends = reversalWindowEnds(settled);
    return { ends, open: today <= ends };
  } catch {
    return null;
  }
}

/** Why a payment cannot be selected for reversal, or null when it can. */
export function notReversible(p: Paystub, today: string): string | null {
  switch (p.payment.status) {
    case 'scheduled':
      break;
    case 'returned':
      return 'returned by the bank: the money is back';
    case 'reversal_scheduled':
    case 'reversal_returned':
      return 'reversed already';
    default:
      return 'nothing was paid';
  }
  const window = reversalWindowOf(p, today);
  if (!window) return 'nothing was paid';
  if (!window.open) return `the reversal window closed on ${formatDate(window.ends)}`;
  return null;
}

/** A payment's reversal, in the paystub list: its status, reason, settlement and the bank's return of it. */
export function ReversalBadge({ p }: { p: Paystub }) {
  const r = p.payment.reversal;
  return (
    <div data-testid="reversal-status">
      <StatusBadge status={p.payment.status} label={paymentStatusLabel(p.payment.status)} />
      {r && (
        <div class="muted">
          {reasonWord(r.reason)} · reversal debit settles {formatDate(r.effective_entry_date)}
          {r.return && (
            <>
              {' '}
              · <span class="badge badge-bad">{r.return.code}</span> {r.return.reason}
            </>
          )}
        </div>
      )}
    </div>
  );
}

/**
 * Reverses the payments selected in the run's paystub list, for one reason, after a confirmation that lists each with
 * its amount and the last day of its window. The request carries an `Idempotency-Key`, kept while the same payments
 * and reason are asked again (a retry after a lost answer replays the first file instead of writing a second).
 */
export function ReversePayments({
  payrollId,
  selected,
  today,
  onReversed,
  onRefused,
}: {
  payrollId: string;
  selected: Paystub[];
  today: string;
  onReversed: (reversal: Reversal) => void;
  /** A refusal (409, 422): a payment moved since the list was read; the list is read again. */
  onRefused: () => void;
}) {
  const [reason, setReason] = useState<ReversalReason | ''>('');
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  // The refusal, with the names of the payments it was about (the list read again may no longer select them).
  const [failure, setFailure] = useState<{ error: unknown; names: Map<string, string> } | null>(null);
  const error = failure?.error ?? null;
  const [result, setResult] = useState<{ reversal: Reversal; names: Map<string, string> } | null>(null);
  const key = useRef<{ content: string; key: string } | null>(null);
  const resultRef = useRef<HTMLDivElement>(null);
  const errorRef = useRef<HTMLDivElement>(null);
  // Focus follows what replaces the button pressed: the question, then back to the button (Go back), the outcome, or
  // the refusal, so the keyboard stays where the reader is.
  const { confirmRef, askRef } = useConfirmFocus(confirming, () => !result && !error);
  useEffect(() => {
    if (result) resultRef.current?.focus();
  }, [result]);
  useEffect(() => {
    if (failure) errorRef.current?.focus();
  }, [failure]);
  // A change of the selection or the reason is another request: the question asked is withdrawn.
  const ids = selected.map((p) => p.paystub_id).sort();
  const content = JSON.stringify({ reason, ids });
  useEffect(() => setConfirming(false), [content]);

  const total = selected.reduce((sum, p) => sum + p.net_pay, 0);
  const tooMany = selected.length > MAX_REVERSAL_PAYMENTS;
  const names = new Map(selected.map((p) => [p.paystub_id, p.employee_name]));

  const reverse = async () => {
    if (!reason || busy) return;
    if (key.current?.content !== content) key.current = { content, key: newIdempotencyKey() };
    setBusy(true);
    setFailure(null);
    try {
      const { data } = await api<Reversal>('POST', `/v1/payroll/${encodeURIComponent(payrollId)}/reversals`, {
        body: { reason, paystub_ids: ids },
        headers: { 'Idempotency-Key': key.current.key },
      });
      key.current = null;
      setConfirming(false);
      setReason('');
      setResult({ reversal: data, names });
      onReversed(data);
    } catch (err) {
      setConfirming(false);
      setFailure({ error: err, names });
      if (err instanceof ApiError && (err.status === 409 || err.status === 422)) onRefused();
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card money-reversal" aria-labelledby="reverse-title" data-testid="reversal">
      <h3 id="reverse-title">Reverse payments</h3>
      <p class="small">
        Takes back payments made in error (paid twice, the wrong amount, the wrong account): a reversal file debits each
        employee’s account for the amount deposited, and their paystubs become voided. A payment can be reversed until
        the {REVERSAL_WINDOW_BANKING_DAYS}th banking day after it settled, once. Select the payments in the table above.
      </p>
      {result && (
        <ReversalResult result={result.reversal} names={result.names} payrollId={payrollId} resultRef={resultRef} />
      )}
      {failure && (
        <div tabIndex={-1} ref={errorRef}>
          <ReversalRefusal error={failure.error} names={failure.names} />
        </div>
      )}
      <p aria-live="polite" data-testid="reversal-selection">
        {selected.length === 0
          ? 'No payment selected.'
          : `${selected.length} payment${selected.length === 1 ? '' : 's'} selected: ${formatMoney(total)}.`}
        {tooMany && ` At most ${MAX_REVERSAL_PAYMENTS} payments per reversal: deselect some.`}
      </p>
      {selected.length > 0 && (
        <ul class="money-selected" data-testid="reversal-selected">
          {selected.map((p) => {
            const window = reversalWindowOf(p, today);
            return (
              <li key={p.paystub_id}>
                <strong>{p.employee_name}</strong> {formatMoney(p.net_pay)}
                {window && (
                  <span class="small muted" data-testid="window-ends">
                    {' '}
                    — reversible until {formatDate(window.ends)}
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <div class="form-grid">
        <Field id="reversal-reason" label="Reason">
          <select
            id="reversal-reason"
            class="input"
            value={reason}
            onChange={(e) => setReason((e.currentTarget as HTMLSelectElement).value as ReversalReason | '')}
          >
            <option value="">Choose a reason</option>
            {REVERSAL_REASONS.map((r) => (
              <option key={r} value={r}>
                {REVERSAL_REASON_LABELS[r]}
              </option>
            ))}
          </select>
        </Field>
        <div class="form-actions">
          <button
            type="button"
            class="button button-danger"
            disabled={selected.length === 0 || !reason || tooMany || busy || confirming}
            ref={askRef}
            onClick={() => {
              setFailure(null);
              setResult(null);
              setConfirming(true);
            }}
          >
            {selected.length > 1 ? `Reverse ${selected.length} payments…` : 'Reverse the payment…'}
          </button>
        </div>
      </div>
      {confirming && reason && (
        <div class="alert alert-warn" role="alertdialog" aria-labelledby="reversal-confirm-text">
          <p id="reversal-confirm-text">
            Reverse{' '}
            {selected.length === 1 ? `the payment of ${selected[0]!.employee_name}` : `${selected.length} payments`} (
            {formatMoney(total)}) as “{reasonWord(reason).toLowerCase()}”? A reversal file debits{' '}
            {selected.length === 1 ? 'their account' : 'each account'} for the amount deposited, and{' '}
            {selected.length === 1 ? 'the paystub becomes' : 'the paystubs become'} voided. This cannot be undone.
          </p>
          <div class="form-actions">
            <button type="button" class="button button-danger" onClick={reverse} disabled={busy} ref={confirmRef}>
              {busy ? 'Reversing…' : 'Yes, reverse'}
            </button>
            <button type="button" class="button" onClick={() => setConfirming(false)} disabled={busy}>
              Go back
            </button>
          </div>
        </div>
      )}
    </section>
  );
}

function ReversalResult({
  result,
  names,
  payrollId,
  resultRef,
}: {
  result: Reversal;
  names: Map<string, string>;
  payrollId: string;
  resultRef: { current: HTMLDivElement | null };
}) {
  const n = result.payments.length;
  return (
    <div class="alert alert-ok" data-testid="reversal-result" tabIndex={-1} ref={resultRef}>
      <p>
        <strong>
          Reversed {n} payment{n === 1 ? '' : 's'}:
        </strong>{' '}
        file <code class="break">{result.file.file_id}</code> ({formatMoney(result.file.total_debit)} debited), to reach
        the bank by {formatDate(result.file.release_by)} and settle {formatDate(result.file.effective_entry_date)}.{' '}
        <a href={filesOf(payrollId, 'reversal')}>See it among the files</a>.
      </p>
      <ul class="problems">
        {result.payments.map((p) => (
          <li key={p.paystub_id}>
            {names.get(p.paystub_id) ?? <code>{p.paystub_id}</code>}: {formatMoney(p.amount)}{' '}
            <StatusBadge status={p.status} label={paymentStatusLabel(p.status)} />{' '}
            <span class="small">
              trace <code>{p.reversal_trace_number}</code>
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A refused reversal: the API's message, and each payment it names, by the employee's name, with its reason. */
function ReversalRefusal({ error, names }: { error: unknown; names: Map<string, string> }) {
  if (!(error instanceof ApiError) || ![409, 422].includes(error.status) || error.details.length === 0)
    return <ErrorBox error={error} title="The payments were not reversed" />;
  return (
    <div class="alert alert-error" role="alert" data-testid="reversal-refused">
      <p class="alert-title">
        <strong>No payment was reversed:</strong> {error.message}{' '}
        <span class="muted">
          ({error.status} {error.code})
        </span>
      </p>
      <ul class="problems">
        {error.details.map((d, i) => {
          const id = typeof d.paystub_id === 'string' ? d.paystub_id : null;
          return (
            <li key={i}>
              {id && names.has(id) && <strong>{names.get(id)}: </strong>}
              {d.message}
              {d.code && <span class="muted"> ({d.code})</span>}
            </li>
          );
        })}
      </ul>
      {error.requestId && (
        <p class="muted small">
          Request id: <code>{error.requestId}</code>
        </p>
      )}
    </div>
  );
}
