import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, listPage, type Page } from '../api.js';
import type { Employee, Paystub, Settings } from '../types.js';
import {
  ErrorBox,
  Field,
  fieldProblems,
  formatDate,
  formatMoney,
  formatPeriod,
  formValue,
  LoadMore,
  PageTitle,
  StatusBadge,
  TableRegion,
  useAsync,
  When,
} from '../ui.js';

type BankAccount = NonNullable<Employee['bank_account']>;

/** The fields the edit form changes; the bank account has its own form. */
const DETAIL_FIELDS = [
  'first_name',
  'last_name',
  'email',
  'employment_type',
  'pay_group',
  'pay_schedule',
  'start_date',
] as const;
type DetailField = (typeof DETAIL_FIELDS)[number];

/** What the API answers about an account, and all it ever will: the last 4 digits, never more. */
export function maskedBankAccount(a: BankAccount): string {
  return `${a.account_type} ••••${a.account_number_last4} · routing ${a.routing_number}`;
}

const fullName = (e: Employee) => `${e.first_name} ${e.last_name}`;

/** One employee: details, direct deposit and its status, paystub history with year-to-date; edit, re-bank, remove. */
export function EmployeeDetailPage({ employeeId }: { employeeId: string }) {
  const loaded = useAsync(
    async () => (await api<Employee>('GET', `/v1/employees/${encodeURIComponent(employeeId)}`)).data,
    [employeeId],
  );
  const [current, setCurrent] = useState<Employee | null>(null);
  const [removed, setRemoved] = useState<Employee | null>(null);
  const [notice, setNotice] = useState('');
  const employee = removed ?? current ?? loaded.data;
  const missing = loaded.error instanceof ApiError && loaded.error.status === 404;

  return (
    <>
      <p class="breadcrumb">
        <a href="#/employees">Employees</a> <span aria-hidden="true">›</span> <code>{employeeId}</code>
      </p>
      <PageTitle subtitle={employee ? <code>{employee.employee_id}</code> : undefined}>
        {employee ? fullName(employee) : 'Employee'}
      </PageTitle>
      <p role="status" class={notice ? 'alert alert-ok' : 'sr-only'} data-testid="employee-notice">
        {notice}
      </p>
      {missing ? (
        <div class="alert alert-warn" data-testid="employee-missing">
          <p>
            <strong>No active employee with this id.</strong> It may have been removed: a removed employee is no longer
            listed or readable, but its paystubs are (below).
          </p>
        </div>
      ) : (
        <ErrorBox error={loaded.error} title="The employee could not be loaded" />
      )}
      {loaded.loading && !employee && <p class="muted">Loading the employee…</p>}

      {removed && <Removed employee={removed} />}

      {employee && !removed && (
        <>
          <Details employee={employee} />
          <DirectDeposit
            employee={employee}
            onSaved={(e, message) => {
              setCurrent(e);
              setNotice(message);
            }}
          />
          <EditEmployee
            employee={employee}
            onSaved={(e, message) => {
              setCurrent(e);
              setNotice(message);
            }}
          />
        </>
      )}

      {(employee || missing) && <PaystubHistory employeeId={employeeId} />}

      {employee && !removed && (
        <RemoveEmployee
          employee={employee}
          onRemoved={(e) => {
            setRemoved(e);
            setNotice('');
          }}
        />
      )}
    </>
  );
}

/** What removal did. It takes focus: the button that removed the employee is gone with the rest of the page. */
function Removed({ employee }: { employee: Employee }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <div class="alert alert-warn" data-testid="employee-removed" tabIndex={-1} ref={ref}>
      <p>
        <strong>{fullName(employee)} was removed.</strong> They can no longer be paid and are gone from the list; their
        email may be onboarded again. Their paystubs stay readable below and on each run.{' '}
        <a href="#/employees">Back to Employees</a>
      </p>
    </div>
  );
}

function Details({ employee: e }: { employee: Employee }) {
  return (
    <section class="card" aria-labelledby="employee-details-title">
      <h2 id="employee-details-title">Details</h2>
      <dl class="facts" data-testid="employee-details">
        <div>
          <dt>Email</dt>
          <dd class="break">{e.email}</dd>
        </div>
        <div>
          <dt>Employment type</dt>
          <dd>{e.employment_type}</dd>
        </div>
        <div>
          <dt>Pay group</dt>
          <dd>{e.pay_group}</dd>
        </div>
        <div>
          <dt>Pay schedule</dt>
          <dd>{e.pay_schedule}</dd>
        </div>
        <div>
          <dt>Start date</dt>
          <dd>{formatDate(e.start_date)}</dd>
        </div>
        <div>
          <dt>Added</dt>
          <dd>
            <When iso={e.created_at} />
          </dd>
        </div>
        <div>
          <dt>Last changed</dt>
          <dd>
            <When iso={e.updated_at} />
          </dd>
        </div>
      </dl>
    </section>
  );
}

/** The masked account and its status; a form for a new account (the fix after a return), or none at all. */
function DirectDeposit({ employee, onSaved }: { employee: Employee; onSaved: (e: Employee, message: string) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<'set' | 'remove' | null>(null);
  const { problem, invalid } = fieldProblems(error);
  const account = employee.bank_account;
  const path = `/v1/employees/${encodeURIComponent(employee.employee_id)}`;

  const setAccount = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setError(null);
    setBusy('set');
    try {
      const { data } = await api<Employee>('PATCH', path, {
        body: {
          bank_account: {
            routing_number: formValue(form, 'routing_number'),
            account_number: formValue(form, 'account_number'),
            account_type: formValue(form, 'account_type') === 'savings' ? 'savings' : 'checking',
          },
        },
      });
      // The full number leaves the page at once: only the API's last 4 digits remain.
      form.reset();
      onSaved(
        data,
        data.bank_account ? `New bank account set: ${maskedBankAccount(data.bank_account)}.` : 'Bank account set.',
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  const removeAccount = async () => {
    if (!confirm('Remove direct deposit? The employee cannot be paid until a bank account is set again.')) return;
    setError(null);
    setBusy('remove');
    try {
      const { data } = await api<Employee>('PATCH', path, { body: { bank_account: null } });
      onSaved(data, 'Direct deposit removed.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  return (
    <section class="card" aria-labelledby="deposit-title">
      <h2 id="deposit-title">Direct deposit</h2>
      <ErrorBox error={error} title="The bank account was not changed" />
      <div class="funding-current" data-testid="bank-account">
        {account ? (
          <div>
            <p>
              <strong class="mono">{maskedBankAccount(account)}</strong> <StatusBadge status={account.status} />
            </p>
            {account.status === 'invalid' && (
              <p class="small" data-testid="bank-account-invalid">
                {account.status_reason ?? 'The bank returned a deposit to this account.'} The next payroll refuses this
                employee until a new account is set below.
              </p>
            )}
            {account.corrected_at && (
              <p class="small muted" data-testid="bank-account-corrected">
                Corrected by the bank’s notification of change <When iso={account.corrected_at} />.
              </p>
            )}
          </div>
        ) : (
          <p>No direct deposit: this employee cannot be paid until a bank account is set.</p>
        )}
        {account && (
          <button type="button" class="button button-danger" onClick={removeAccount} disabled={busy !== null}>
            {busy === 'remove' ? 'Removing…' : 'Remove direct deposit'}
          </button>
        )}
      </div>
      <form onSubmit={setAccount} noValidate aria-labelledby="new-account-title">
        <h3 id="new-account-title" class="h3">
          {account ? 'Set a new bank account' : 'Set a bank account'}
        </h3>
        <div class="form-grid">
          <Field id="bank-routing" label="Routing number" hint="9 digits (ABA)">
            <input
              id="bank-routing"
              name="routing_number"
              class="input mono"
              inputMode="numeric"
              autoComplete="off"
              maxLength={9}
              {...invalid('bank_account.routing_number', 'bank-routing', true)}
            />
            {problem('bank_account.routing_number', 'bank-routing')}
          </Field>
          <Field id="bank-account" label="Account number" hint="4 to 17 digits. Only the last 4 show again.">
            <input
              id="bank-account"
              name="account_number"
              class="input mono"
              inputMode="numeric"
              autoComplete="off"
              maxLength={17}
              {...invalid('bank_account.account_number', 'bank-account', true)}
            />
            {problem('bank_account.account_number', 'bank-account')}
          </Field>
          <Field id="bank-type" label="Account type">
            <select
              id="bank-type"
              name="account_type"
              class="input"
              {...invalid('bank_account.account_type', 'bank-type')}
            >
              <option value="checking">checking</option>
              <option value="savings">savings</option>
            </select>
            {problem('bank_account.account_type', 'bank-type')}
          </Field>
          <div class="form-actions">
            <button type="submit" class="button button-primary" disabled={busy !== null}>
              {busy === 'set' ? 'Saving…' : 'Save bank account'}
            </button>
          </div>
        </div>
      </form>
    </section>
  );
}

/** Changes the details: only the fields that differ are sent, and each refused one shows the API's message. */
function EditEmployee({ employee, onSaved }: { employee: Employee; onSaved: (e: Employee, message: string) => void }) {
  const settings = useAsync(async () => (await api<Settings>('GET', '/v1/settings')).data, []);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [nothing, setNothing] = useState(false);
  // Counts this form's saves: the inputs start again from what the API stored, and focus goes back to Save.
  const [saves, setSaves] = useState(0);
  const saveButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (saves > 0) saveButton.current?.focus();
  }, [saves]);
  const { problem, invalid } = fieldProblems(error);

  const save = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setError(null);
    setNothing(false);
    const changed: Partial<Record<DetailField, string>> = {};
    for (const name of DETAIL_FIELDS) {
      const value = formValue(form, name);
      if (value !== employee[name]) changed[name] = value;
    }
    if (Object.keys(changed).length === 0) {
      setNothing(true);
      return;
    }
    setBusy(true);
    try {
      const { data } = await api<Employee>('PATCH', `/v1/employees/${encodeURIComponent(employee.employee_id)}`, {
        body: changed,
      });
      onSaved(data, `Saved: ${Object.keys(changed).join(', ').replace(/_/g, ' ')}.`);
      setSaves((n) => n + 1);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  /** The configured values, and the employee's own even if it is no longer configured (so it is not changed by accident). */
  const options = (values: string[] | undefined, own: string) =>
    [...new Set([own, ...(values ?? [])])].map((v) => (
      <option key={v} value={v}>
        {v}
      </option>
    ));
  const text = (name: DetailField, id: string, label: string, type: 'text' | 'email' | 'date' = 'text') => (
    <Field id={id} label={label}>
      <input
        id={id}
        name={name}
        // The input types' attribute sets differ only in `list` and `role`, neither used here.
        type={type as 'text'}
        class="input"
        autoComplete="off"
        defaultValue={employee[name]}
        {...invalid(name, id)}
      />
      {problem(name, id)}
    </Field>
  );
  const select = (name: 'employment_type' | 'pay_group' | 'pay_schedule', id: string, label: string) => {
    const key = name === 'employment_type' ? 'employment_types' : name === 'pay_group' ? 'pay_groups' : 'pay_schedules';
    return (
      <Field id={id} label={label}>
        <select id={id} name={name} class="input" defaultValue={employee[name]} {...invalid(name, id)}>
          {options(settings.data?.[key], employee[name])}
        </select>
        {problem(name, id)}
      </Field>
    );
  };

  return (
    <section class="card" aria-labelledby="edit-employee-title">
      <h2 id="edit-employee-title">Edit details</h2>
      <ErrorBox error={error} title="The employee was not saved" />
      <ErrorBox error={settings.error} title="The organization's settings could not be loaded" />
      {nothing && <p class="muted">Nothing to save: no field changed.</p>}
      {settings.loading && !settings.data && <p class="muted">Loading the configured values…</p>}
      {/* Shown once the configured values are known (so nothing typed is lost to a late redraw); remounted after
          each save, so the inputs start from what the API stored. */}
      {(settings.data || settings.error) && (
        <form key={saves} onSubmit={save} noValidate>
          <div class="form-grid">
            {text('first_name', 'edit-first', 'First name')}
            {text('last_name', 'edit-last', 'Last name')}
            {text('email', 'edit-email', 'Email', 'email')}
            {text('start_date', 'edit-start', 'Start date', 'date')}
            {select('employment_type', 'edit-type', 'Employment type')}
            {select('pay_group', 'edit-group', 'Pay group')}
            {select('pay_schedule', 'edit-schedule', 'Pay schedule')}
            <div class="form-actions">
              <button ref={saveButton} type="submit" class="button button-primary" disabled={busy}>
                {busy ? 'Saving…' : 'Save changes'}
              </button>
            </div>
          </div>
        </form>
      )}
    </section>
  );
}

/** Every paystub of the employee, newest first as the API lists them, each with its year-to-date totals. */
function PaystubHistory({ employeeId }: { employeeId: string }) {
  const [pages, setPages] = useState<Page<Paystub> | null>(null);
  const [moreError, setMoreError] = useState<unknown>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const stubs = useAsync(async () => {
    const page = await listPage<Paystub>('/v1/paystubs', 'paystubs', { employee_id: employeeId, limit: 50 });
    setPages(page);
    return page;
  }, [employeeId]);
  const items = pages?.items ?? [];

  const more = async () => {
    if (!pages?.next_page_token) return;
    setLoadingMore(true);
    setMoreError(null);
    try {
      const page = await listPage<Paystub>('/v1/paystubs', 'paystubs', {
        employee_id: employeeId,
        limit: 50,
        page_token: pages.next_page_token,
      });
      setPages({ items: [...pages.items, ...page.items], next_page_token: page.next_page_token });
    } catch (err) {
      setMoreError(err);
    } finally {
      setLoadingMore(false);
    }
  };

  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">Paystub history</h2>
      <p class="small muted">
        Year to date: this employee’s issued paystubs of the same calendar year, up to and including each one (voided
        ones left out).
      </p>
      <ErrorBox error={stubs.error} title="The paystubs could not be loaded" />
      <ErrorBox error={moreError} title="More paystubs could not be loaded" />
      {stubs.loading && !pages && <p class="muted">Loading paystubs…</p>}
      {pages && items.length === 0 && <p data-testid="no-paystubs">No paystubs yet.</p>}
      {items.length > 0 && (
        <TableRegion label="Paystub history">
          <table class="table responsive" data-testid="employee-paystubs">
            <thead>
              <tr>
                <th scope="col">Pay date</th>
                <th scope="col">Period</th>
                <th scope="col" class="num">
                  Gross
                </th>
                <th scope="col" class="num">
                  Net
                </th>
                <th scope="col" class="num">
                  YTD gross
                </th>
                <th scope="col" class="num">
                  YTD net
                </th>
                <th scope="col">Deposit</th>
              </tr>
            </thead>
            <tbody>
              {items.map((p) => (
                <tr key={p.paystub_id} data-paystub-id={p.paystub_id}>
                  <td data-label="Pay date" class="nowrap">
                    <a href={`#/payrolls/${encodeURIComponent(p.payroll_id)}`}>{formatDate(p.pay_date)}</a>
                    {p.status === 'voided' && (
                      <div>
                        <StatusBadge status="voided" />
                      </div>
                    )}
                  </td>
                  <td data-label="Period">{formatPeriod(p.period_start, p.period_end)}</td>
                  <td data-label="Gross" class="num">
                    {formatMoney(p.gross_pay)}
                    {p.bonuses > 0 && <div class="small muted">+ {formatMoney(p.bonuses)} bonus</div>}
                  </td>
                  <td data-label="Net" class="num">
                    {formatMoney(p.net_pay)}
                  </td>
                  <td data-label="YTD gross" class="num" data-testid="ytd-gross">
                    {formatMoney(p.year_to_date.gross_pay)}
                    {p.year_to_date.bonuses > 0 && (
                      <div class="small muted">+ {formatMoney(p.year_to_date.bonuses)} bonuses</div>
                    )}
                  </td>
                  <td data-label="YTD net" class="num" data-testid="ytd-net">
                    {formatMoney(p.year_to_date.net_pay)}
                  </td>
                  <td data-label="Deposit">
                    <span class="nowrap">
                      {p.payment.account_type} ••{p.payment.account_number_last4}
                    </span>{' '}
                    <StatusBadge status={p.payment.status} />
                    {p.payment.return && (
                      <div class="small">
                        {p.payment.return.code}: {p.payment.return.reason}
                      </div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
      <LoadMore next={pages?.next_page_token ?? null} loading={loadingMore} onClick={more} label="Load more paystubs" />
    </section>
  );
}

/** Removal, after a confirmation that says what it does to the employee's history. */
function RemoveEmployee({ employee, onRemoved }: { employee: Employee; onRemoved: (e: Employee) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const remove = async () => {
    if (
      !confirm(
        `Remove ${fullName(employee)}? They can no longer be paid and leave the employee list. Their paystubs stay readable.`,
      )
    )
      return;
    setError(null);
    setBusy(true);
    try {
      const { data } = await api<Employee>('DELETE', `/v1/employees/${encodeURIComponent(employee.employee_id)}`);
      onRemoved(data);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card danger-zone" aria-labelledby="remove-employee-title">
      <h2 id="remove-employee-title">Remove this employee</h2>
      <p class="small">
        A removed employee can no longer be paid, is no longer listed or readable, and their email may be onboarded
        again. Their paystubs and the runs that paid them stay readable.
      </p>
      <ErrorBox error={error} title="The employee was not removed" />
      <button type="button" class="button button-danger" onClick={remove} disabled={busy}>
        {busy ? 'Removing…' : 'Remove employee'}
      </button>
    </section>
  );
}
