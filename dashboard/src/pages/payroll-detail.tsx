import { useEffect, useState } from 'preact/hooks';
import { api, apiBlob, listPage, type Page } from '../api.js';
import type { PayrollDetail, Paystub } from '../types.js';
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
  usePolling,
  When,
} from '../ui.js';
import { isUnfinished, ProgressBar } from './payrolls.js';

/** One run: polled every second while pending or processing, with its progress, totals, history and paystubs. */
export function PayrollDetailPage({ payrollId }: { payrollId: string }) {
  const path = `/v1/payroll/${encodeURIComponent(payrollId)}`;
  const run = useAsync(async () => (await api<PayrollDetail>('GET', path)).data, [payrollId]);
  const [live, setLive] = useState<PayrollDetail | undefined>(undefined);
  const [pollError, setPollError] = useState<unknown>(null);
  const payroll = live ?? run.data;
  const moving = payroll ? isUnfinished(payroll.status) : false;

  usePolling(
    async () => {
      try {
        setLive((await api<PayrollDetail>('GET', path)).data);
        setPollError(null);
      } catch (err) {
        setPollError(err);
        throw err;
      }
    },
    1000,
    moving,
  );

  return (
    <>
      <p class="breadcrumb">
        <a href="#/payrolls">Payrolls</a> <span aria-hidden="true">›</span> <code>{payrollId}</code>
      </p>
      <PageTitle>Payroll run</PageTitle>
      <ErrorBox error={run.error} title="The run could not be loaded" />
      <ErrorBox error={pollError} title="Refreshing the run failed (retrying)" />
      {!payroll && run.loading && <p aria-live="polite">Loading…</p>}
      {payroll && <RunView payroll={payroll} />}
    </>
  );
}

function RunView({ payroll }: { payroll: PayrollDetail }) {
  const moving = isUnfinished(payroll.status);
  return (
    <>
      <section class="card run-summary" aria-labelledby="run-status-title">
        <h2 id="run-status-title" class="sr-only">
          Status
        </h2>
        <div class="run-status">
          <code class="run-id">{payroll.payroll_id}</code>
          <StatusBadge status={payroll.status} />
          {payroll.type === 'off_cycle' && <span class="badge badge-neutral">off-cycle</span>}
        </div>
        <p role="status" aria-live="polite" class="run-status-text" data-testid="run-status">
          {payroll.status === 'pending'
            ? `Waiting to be processed: ${payroll.progress.done} of ${payroll.progress.total} employees paid.`
            : moving
              ? `Processing: ${payroll.progress.done} of ${payroll.progress.total} employees paid so far.`
              : `This run is ${payroll.status}.`}
        </p>
        <ProgressBar payroll={payroll} label="Payroll processing progress" />
        {payroll.failure_reason && <p class="alert alert-error">Failure: {payroll.failure_reason}</p>}
        {payroll.findings.length > 0 && (
          <div class="alert alert-error">
            <p>
              <strong>Compliance findings</strong>
            </p>
            <ul>
              {payroll.findings.map((f, i) => (
                <li key={i}>
                  <code>{f.code}</code> {f.message}
                  {f.employee_id && (
                    <>
                      {' '}
                      (<code>{f.employee_id}</code>)
                    </>
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
        </dl>
      </section>

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
        {payroll.disbursement && (
          <p class="muted small" data-testid="disbursement">
            NACHA file {payroll.disbursement.file_id_modifier}: {payroll.disbursement.entry_count} entries,{' '}
            {formatMoney(payroll.disbursement.total_credit)} credited
            {payroll.disbursement.total_debit > 0 && (
              <>, {formatMoney(payroll.disbursement.total_debit)} debited from the funding account</>
            )}
            , {payroll.disbursement.batch_count} batch{payroll.disbursement.batch_count === 1 ? '' : 'es'}.
          </p>
        )}
        {(payroll.disbursement || payroll.returns.count > 0) && (
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
      </section>

      {payroll.returns.count > 0 && <ReturnedPayments payrollId={payroll.payroll_id} count={payroll.returns.count} />}

      <section aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        <ol class="timeline">
          {payroll.status_history.map((h, i) => (
            <li key={i}>
              <StatusBadge status={h.status} /> <span class="small">{formatDateTime(h.at)}</span>
              {h.reason && <span class="small muted"> — {h.reason}</span>}
            </li>
          ))}
        </ol>
      </section>

      {!moving && payroll.status !== 'pending' && <Paystubs payrollId={payroll.payroll_id} status={payroll.status} />}
    </>
  );
}

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

function Paystubs({ payrollId, status }: { payrollId: string; status: string }) {
  const [pages, setPages] = useState<Page<Paystub> | null>(null);
  const [pdfError, setPdfError] = useState<unknown>(null);
  const [opening, setOpening] = useState<string | null>(null);
  const [opened, setOpened] = useState<{ name: string; url: string } | null>(null);
  const stubs = useAsync(async () => {
    const page = await listPage<Paystub>('/v1/paystubs', 'paystubs', { payroll_id: payrollId, limit: 100 });
    setPages(page);
    return page;
  }, [payrollId, status]);

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
      setOpened({ name: p.employee_name, url });
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

  const items = pages?.items ?? [];
  return (
    <section aria-labelledby="paystubs-title">
      <h2 id="paystubs-title">Paystubs</h2>
      <ErrorBox error={stubs.error} title="The paystubs could not be loaded" />
      <ErrorBox error={pdfError} title="The PDF could not be opened" />
      {opened && (
        <p class="small" role="status">
          Opened the paystub of {opened.name} in a new tab.{' '}
          <a href={opened.url} target="_blank" rel="noopener">
            Open it again
          </a>{' '}
          or{' '}
          <a href={opened.url} download={`paystub-${opened.name.replace(/\W+/g, '-').toLowerCase()}.pdf`}>
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
              {items.map((p) => (
                <tr key={p.paystub_id}>
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
                    ) : (
                      <div class="muted">{p.payment?.status}</div>
                    )}
                    {p.payment?.effective_entry_date && (
                      <div class="muted nowrap">settles {formatDate(p.payment.effective_entry_date)}</div>
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
              ))}
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
    </section>
  );
}
