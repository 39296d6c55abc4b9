import { environmentOf, readToken } from '../session.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, listPage, type Page, type Query } from '../api.js';
import type { Payroll, PayrollDetail } from '../types.js';
import {
  ErrorBox,
  Field,
  FilterForm,
  formatDate,
  formatPeriod,
  formValue,
  LoadMore,
  PageTitle,
  SectionHead,
  StatusBadge,
  TableRegion,
  useAsync,
  useNow,
  usePolling,
  When,
} from '../ui.js';
import { FundingHoldBanner, useFundingHold } from './money-back.js';
import {
  isAwaitingApproval,
  isUnfinished,
  isUnpaid,
  netPayLabel,
  STATUS_OPTIONS,
  statusLabel,
  timeLeft,
  toneOf,
} from './runs-model.js';

/** A run's status as a badge, under the lifecycle's label for it ("Processed", "Awaiting approval"). */
export function RunStatusBadge({ status }: { status: string }) {
  return <StatusBadge status={status} label={statusLabel(status)} />;
}

export function ProgressBar({
  payroll,
  label,
  compact = false,
}: {
  payroll: Pick<Payroll, 'progress' | 'status'>;
  label: string;
  compact?: boolean;
}) {
  const { done, total } = payroll.progress;
  const percent = total > 0 ? Math.round((done / total) * 100) : 0;
  const tone = toneOf(payroll.status);
  // The bar's colour says the outcome (green completed, red failed or rejected, grey cancelled, blue moving); the
  // words say it too, since colour alone says nothing to a screen reader.
  const outcome =
    payroll.status === 'failed'
      ? ' processed, then the run failed: nothing paid'
      : payroll.status === 'cancelled'
        ? ' processed, then the run was cancelled: nothing paid'
        : payroll.status === 'rejected'
          ? ' (rejected: nothing paid)'
          : '';
  return (
    <div class={`progress progress-${tone}${compact ? ' progress-compact' : ''}`} data-tone={tone}>
      <progress aria-label={label} max={Math.max(total, 1)} value={done} />
      <span class={compact ? 'small nowrap' : 'small'}>
        {done} of {total}
        {compact ? '' : ` (${percent}%)`}
        {compact ? '' : outcome}
      </span>
    </div>
  );
}

/** A run's net pay with what became of it: a failed, cancelled or rejected run's is struck through, "not paid". */
function NetPay({ status, net }: { status: string; net: number }) {
  const { amount, note } = netPayLabel(status, net);
  const unpaid = isUnpaid(status);
  return (
    <span class={unpaid ? 'runs-unpaid' : undefined} data-testid="net-pay">
      {unpaid ? <s>{amount}</s> : amount}
      <span class="small runs-net-note"> {note}</span>
    </span>
  );
}

/**
 * Why each failed or rejected run on the page ended so (the list carries no reason): one read of each such run,
 * kept for the page's life, so polling never asks again.
 */
function useReasons(runs: Payroll[]): Map<string, string> {
  const [reasons, setReasons] = useState<Map<string, string>>(new Map());
  const asked = useRef(new Set<string>());
  const ended = runs
    .filter((r) => r.status === 'failed' || r.status === 'rejected')
    .map((r) => r.payroll_id)
    .join(' ');
  useEffect(() => {
    const wanted = ended.split(' ').filter((id) => id && !asked.current.has(id));
    for (const id of wanted) asked.current.add(id);
    for (const id of wanted)
      void api<PayrollDetail>('GET', `/v1/payroll/${encodeURIComponent(id)}`).then(
        ({ data }) => {
          const first = data.findings[0];
          const reason =
            data.failure_reason ??
            (first
              ? `${first.message}${data.findings.length > 1 ? ` (+${data.findings.length - 1} more)` : ''}`
              : null);
          if (reason) setReasons((old) => new Map(old).set(id, reason));
        },
        () => asked.current.delete(id),
      );
  }, [ended]);
  return reasons;
}

/** Payroll history (GET /v1/payroll), refreshed every 2 s while a run on the page is still moving. */
export function PayrollsPage() {
  const [filters, setFilters] = useState<Query>({});
  const [pages, setPages] = useState<Page<Payroll> | null>(null);
  const [moreLoading, setMoreLoading] = useState(false);
  const first = useAsync(async () => {
    const page = await listPage<Payroll>('/v1/payroll', 'payrolls', { ...filters, limit: 25 });
    setPages(page);
    return page;
  }, [JSON.stringify(filters)]);

  const runs = pages?.items ?? [];
  const reasons = useReasons(runs);
  const hold = useFundingHold();
  const awaiting = runs.filter((r) => isAwaitingApproval(r.status)).length;
  const now = useNow(60_000, awaiting > 0);
  const refresh = async () => {
    // Refreshes what is shown (the first page and any loaded after it) in one request of the same size.
    const page = await listPage<Payroll>('/v1/payroll', 'payrolls', {
      ...filters,
      limit: Math.min(100, Math.max(25, runs.length)),
    });
    setPages(page);
  };
  usePolling(
    refresh,
    2000,
    runs.some((r) => isUnfinished(r.status)),
  );

  const apply = (form: HTMLFormElement) => {
    setFilters({ status: formValue(form, 'status'), from: formValue(form, 'from'), to: formValue(form, 'to') });
  };

  const loadMore = async () => {
    if (!pages?.next_page_token) return;
    setMoreLoading(true);
    try {
      const page = await listPage<Payroll>('/v1/payroll', 'payrolls', {
        ...filters,
        limit: 25,
        page_token: pages.next_page_token,
      });
      setPages({ items: [...pages.items, ...page.items], next_page_token: page.next_page_token });
    } finally {
      setMoreLoading(false);
    }
  };

  return (
    <>
      <PageTitle subtitle="Payroll runs, newest submitted first (the API's order; filter by pay date below). Runs are processed within seconds of submission.">
        Payrolls
      </PageTitle>
      <FundingHoldBanner hold={hold} />
      <p>
        <a class="button button-primary" href="#/payrolls/new">
          Submit a run from a CSV
        </a>
      </p>

      <FilterForm titleId="payroll-filters-title" onApply={apply} onClear={() => setFilters({})}>
        <Field id="payroll-status" label="Status">
          <select id="payroll-status" name="status" class="input">
            <option value="">Any status</option>
            {STATUS_OPTIONS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </Field>
        <Field id="payroll-from" label="Pay date from">
          <input id="payroll-from" name="from" type="date" class="input" />
        </Field>
        <Field id="payroll-to" label="Pay date to">
          <input id="payroll-to" name="to" type="date" class="input" />
        </Field>
      </FilterForm>

      <section aria-labelledby="runs-title">
        <SectionHead titleId="runs-title" title="Runs" onRefresh={first.reload} />
        <ErrorBox error={first.error} title="The payrolls could not be loaded" />
        {first.loading && !pages && <p aria-live="polite">Loading payrolls…</p>}
        {pages && runs.length === 0 && <p>No payroll run matches.</p>}
        {awaiting > 0 && filters.status !== 'awaiting_approval' && (
          <p class="small" data-testid="awaiting-count">
            <strong>Awaiting approval: {awaiting === 1 ? '1 run' : `${awaiting} runs`} below.</strong> Nothing moves
            until a key other than the one that submitted a run approves it on the run's page.
          </p>
        )}
        {runs.length > 0 && (
          <TableRegion label="Payroll runs">
            <table class="table responsive" data-testid="payroll-table">
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Status</th>
                  <th scope="col">Pay period</th>
                  <th scope="col">Pay date</th>
                  <th scope="col" class="num">
                    Employees
                  </th>
                  <th scope="col" class="num">
                    Net pay
                  </th>
                </tr>
              </thead>
              <tbody>
                {runs.map((r) => (
                  <tr
                    key={r.payroll_id}
                    data-payroll-id={r.payroll_id}
                    data-status={r.status}
                    class={isAwaitingApproval(r.status) ? 'runs-awaiting' : undefined}
                  >
                    <td data-label="Run">
                      <a href={`#/payrolls/${r.payroll_id}`}>
                        <code class="nowrap">{r.payroll_id}</code>
                      </a>
                      <div class="small muted">
                        {r.type === 'off_cycle' ? 'off-cycle · ' : ''}submitted <When iso={r.created_at} />
                      </div>
                    </td>
                    <td data-label="Status" class="status-cell">
                      <RunStatusBadge status={r.status} />
                      {isAwaitingApproval(r.status) && r.approve_by && (
                        <div class="small runs-approve-by" data-testid="approve-by">
                          Approve by <When iso={r.approve_by} />
                          <span class="nowrap"> ({timeLeft(r.approve_by, now, environmentOf(readToken()))})</span>
                        </div>
                      )}
                      {isUnfinished(r.status) && (
                        <ProgressBar payroll={r} label={`Progress of ${r.payroll_id}`} compact />
                      )}
                      {reasons.get(r.payroll_id) && (
                        <div class="small runs-reason" data-testid="run-reason">
                          {reasons.get(r.payroll_id)}
                        </div>
                      )}
                    </td>
                    <td data-label="Pay period" class="nowrap">
                      {formatPeriod(r.pay_period_start, r.pay_period_end)}
                    </td>
                    <td data-label="Pay date" class="nowrap">
                      {formatDate(r.pay_date)}
                    </td>
                    <td data-label="Employees" class="num">
                      {r.employee_count}
                    </td>
                    <td data-label="Net pay" class="num">
                      <NetPay status={r.status} net={r.totals.net_pay} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
        <LoadMore
          next={pages?.next_page_token ?? null}
          loading={moreLoading}
          onClick={loadMore}
          label="Load more runs"
        />
      </section>
    </>
  );
}
