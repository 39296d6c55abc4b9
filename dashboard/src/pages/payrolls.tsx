import { useState } from 'preact/hooks';
import { listPage, type Page, type Query } from '../api.js';
import { PAYROLL_STATUSES, type Payroll } from '../types.js';
import {
  ErrorBox,
  Field,
  FilterForm,
  formatDate,
  formatMoney,
  formatPeriod,
  formValue,
  LoadMore,
  PageTitle,
  SectionHead,
  StatusBadge,
  TableRegion,
  useAsync,
  usePolling,
  When,
} from '../ui.js';

export const isUnfinished = (status: string): boolean => status === 'pending' || status === 'processing';

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
  return (
    <div class={compact ? 'progress progress-compact' : 'progress'}>
      <progress aria-label={label} max={Math.max(total, 1)} value={done} />
      <span class="small nowrap">
        {done} of {total}
        {compact ? '' : ` (${percent}%)`}
      </span>
    </div>
  );
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
      <PageTitle subtitle="Payroll runs, newest pay date first. Submit runs through the API (POST /v1/payroll); they are processed within seconds.">
        Payrolls
      </PageTitle>

      <FilterForm titleId="payroll-filters-title" onApply={apply} onClear={() => setFilters({})}>
        <Field id="payroll-status" label="Status">
          <select id="payroll-status" name="status" class="input">
            <option value="">Any status</option>
            {PAYROLL_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
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
                  <tr key={r.payroll_id} data-payroll-id={r.payroll_id}>
                    <td data-label="Run">
                      <a href={`#/payrolls/${r.payroll_id}`}>
                        <code class="nowrap">{r.payroll_id}</code>
                      </a>
                      <div class="small muted">
                        {r.type === 'off_cycle' ? 'off-cycle · ' : ''}submitted <When iso={r.created_at} />
                      </div>
                    </td>
                    <td data-label="Status" class="status-cell">
                      <StatusBadge status={r.status} />
                      {isUnfinished(r.status) && (
                        <ProgressBar payroll={r} label={`Progress of ${r.payroll_id}`} compact />
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
                      {formatMoney(r.totals.net_pay)}
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
