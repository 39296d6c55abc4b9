import { useMemo, useState } from 'preact/hooks';
import { api, listPage, type Page } from '../api.js';
import type { Employee, Settings } from '../types.js';
import {
  ErrorBox,
  Field,
  fieldProblems,
  formatDate,
  formValue,
  PageTitle,
  SectionHead,
  StatusBadge,
  TableRegion,
  useAsync,
  When,
} from '../ui.js';

/** The API lists employees page by page and has no search: the dashboard loads up to this many and filters them here. */
const LOAD_LIMIT = 1000;

async function loadEmployees(): Promise<{ employees: Employee[]; complete: boolean }> {
  const employees: Employee[] = [];
  let next: string | null = null;
  do {
    const page: Page<Employee> = await listPage<Employee>('/v1/employees', 'employees', {
      limit: 100,
      page_token: next,
    });
    employees.push(...page.items);
    next = page.next_page_token;
  } while (next && employees.length < LOAD_LIMIT);
  return { employees, complete: next === null };
}

function matches(e: Employee, q: string): boolean {
  if (!q) return true;
  const hay =
    `${e.first_name} ${e.last_name} ${e.email} ${e.employee_id} ${e.employment_type} ${e.pay_group}`.toLowerCase();
  return q
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => hay.includes(word));
}

export function EmployeesPage() {
  const list = useAsync(loadEmployees, []);
  const settings = useAsync(async () => (await api<Settings>('GET', '/v1/settings')).data, []);
  const [query, setQuery] = useState('');
  const [adding, setAdding] = useState(false);
  const [formError, setFormError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState<string>('');

  const shown = useMemo(() => (list.data?.employees ?? []).filter((e) => matches(e, query)), [list.data, query]);
  const invalidCount = useMemo(
    () => (list.data?.employees ?? []).filter((e) => e.bank_account?.status === 'invalid').length,
    [list.data],
  );
  const { problem, invalid } = fieldProblems(formError);

  const add = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setFormError(null);
    setBusy(true);
    try {
      const accountNumber = formValue(form, 'account_number');
      const routingNumber = formValue(form, 'routing_number');
      const body = {
        first_name: formValue(form, 'first_name'),
        last_name: formValue(form, 'last_name'),
        email: formValue(form, 'email'),
        employment_type: formValue(form, 'employment_type'),
        pay_group: formValue(form, 'pay_group'),
        pay_schedule: formValue(form, 'pay_schedule'),
        start_date: formValue(form, 'start_date'),
        ...((accountNumber || routingNumber) && {
          bank_account: {
            account_number: accountNumber,
            routing_number: routingNumber,
            account_type: formValue(form, 'account_type'),
          },
        }),
      };
      const { data } = await api<Employee>('POST', '/v1/employees', { body });
      setAdded(`${data.first_name} ${data.last_name} was added (${data.employee_id}). Open their page from the list.`);
      form.reset();
      setAdding(false);
      list.reload();
    } catch (err) {
      setFormError(err);
    } finally {
      setBusy(false);
    }
  };

  const options = (values: string[] | undefined, fallback: string[]) =>
    (values ?? fallback).map((v) => (
      <option key={v} value={v}>
        {v}
      </option>
    ));
  return (
    <>
      <PageTitle subtitle="Active employees of your organization. Account numbers are never shown: only their last four digits.">
        Employees
      </PageTitle>
      <p role="status" class={added ? 'alert alert-ok' : 'sr-only'}>
        {added}
      </p>

      <div class="section-head">
        <div class="field search">
          <label for="employee-search">Search employees</label>
          <input
            id="employee-search"
            type="search"
            class="input"
            value={query}
            placeholder="Name, email or id"
            onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)}
            aria-describedby="employee-count"
          />
        </div>
        <button
          type="button"
          class="button button-primary"
          aria-expanded={adding}
          aria-controls="add-employee"
          onClick={() => {
            setAdding(!adding);
            setAdded('');
          }}
        >
          {adding ? 'Close the form' : 'Add an employee'}
        </button>
      </div>

      {adding && (
        <section class="card" id="add-employee" aria-labelledby="add-employee-title">
          <h2 id="add-employee-title">Add an employee</h2>
          <ErrorBox error={formError} title="The employee was not added" />
          <ErrorBox error={settings.error} title="The organization's settings could not be loaded" />
          <form onSubmit={add} noValidate>
            <div class="form-grid">
              <Field id="emp-first" label="First name">
                <input
                  id="emp-first"
                  name="first_name"
                  class="input"
                  required
                  maxLength={100}
                  autoComplete="off"
                  {...invalid('first_name', 'emp-first')}
                />
                {problem('first_name', 'emp-first')}
              </Field>
              <Field id="emp-last" label="Last name">
                <input
                  id="emp-last"
                  name="last_name"
                  class="input"
                  required
                  maxLength={100}
                  autoComplete="off"
                  {...invalid('last_name', 'emp-last')}
                />
                {problem('last_name', 'emp-last')}
              </Field>
              <Field id="emp-email" label="Email">
                <input
                  id="emp-email"
                  name="email"
                  type="email"
                  class="input"
                  required
                  autoComplete="off"
                  {...invalid('email', 'emp-email')}
                />
                {problem('email', 'emp-email')}
              </Field>
              <Field id="emp-start" label="Start date">
                <input
                  id="emp-start"
                  name="start_date"
                  type="date"
                  class="input"
                  required
                  {...invalid('start_date', 'emp-start')}
                />
                {problem('start_date', 'emp-start')}
              </Field>
              <Field id="emp-type" label="Employment type">
                <select id="emp-type" name="employment_type" class="input" {...invalid('employment_type', 'emp-type')}>
                  {options(settings.data?.employment_types, ['full_time', 'part_time', 'contractor'])}
                </select>
                {problem('employment_type', 'emp-type')}
              </Field>
              <Field id="emp-group" label="Pay group">
                <select id="emp-group" name="pay_group" class="input" {...invalid('pay_group', 'emp-group')}>
                  {options(settings.data?.pay_groups, ['default'])}
                </select>
                {problem('pay_group', 'emp-group')}
              </Field>
              <Field id="emp-schedule" label="Pay schedule">
                <select
                  id="emp-schedule"
                  name="pay_schedule"
                  class="input"
                  {...invalid('pay_schedule', 'emp-schedule')}
                >
                  {options(settings.data?.pay_schedules, ['weekly', 'biweekly', 'semimonthly', 'monthly'])}
                </select>
                {problem('pay_schedule', 'emp-schedule')}
              </Field>
            </div>
            <fieldset class="fieldset">
              <legend>Direct deposit (optional)</legend>
              <div class="form-grid">
                <Field id="emp-account" label="Account number" hint="4 to 17 digits">
                  <input
                    id="emp-account"
                    name="account_number"
                    class="input mono"
                    inputMode="numeric"
                    autoComplete="off"
                    {...invalid('bank_account.account_number', 'emp-account', true)}
                  />
                  {problem('bank_account.account_number', 'emp-account')}
                </Field>
                <Field id="emp-routing" label="Routing number" hint="9 digits (ABA)">
                  <input
                    id="emp-routing"
                    name="routing_number"
                    class="input mono"
                    inputMode="numeric"
                    autoComplete="off"
                    maxLength={9}
                    {...invalid('bank_account.routing_number', 'emp-routing', true)}
                  />
                  {problem('bank_account.routing_number', 'emp-routing')}
                </Field>
                <Field id="emp-account-type" label="Account type">
                  <select id="emp-account-type" name="account_type" class="input">
                    <option value="checking">checking</option>
                    <option value="savings">savings</option>
                  </select>
                </Field>
              </div>
            </fieldset>
            <div class="form-actions">
              <button type="submit" class="button button-primary" disabled={busy}>
                {busy ? 'Adding…' : 'Add employee'}
              </button>
            </div>
          </form>
        </section>
      )}

      <section aria-labelledby="employee-list-title">
        <SectionHead titleId="employee-list-title" title="People" onRefresh={list.reload} />
        <ErrorBox error={list.error} title="The employees could not be loaded" />
        <p id="employee-count" class="muted small" aria-live="polite">
          {list.loading && !list.data
            ? 'Loading employees…'
            : list.data
              ? `${shown.length} of ${list.data.employees.length}${list.data.complete ? '' : '+'} employee${list.data.employees.length === 1 ? '' : 's'}${query ? ` match “${query}”` : ''}`
              : ''}
        </p>
        {list.data && !list.data.complete && (
          <p class="small muted">Only the first {LOAD_LIMIT} employees are searched.</p>
        )}
        {invalidCount > 0 && (
          <p class="alert alert-warn" data-testid="invalid-accounts">
            <strong>
              {invalidCount} employee{invalidCount === 1 ? ' has' : 's have'} an invalid bank account.
            </strong>{' '}
            The bank returned a deposit to it as closed, missing or invalid: the next payroll refuses{' '}
            {invalidCount === 1 ? 'this employee' : 'them'} until a new bank account is set: open the employee and set
            one under Direct deposit.
          </p>
        )}
        {shown.length > 0 && (
          <TableRegion label="Employees">
            <table class="table responsive" data-testid="employee-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Type</th>
                  <th scope="col">Pay</th>
                  <th scope="col">Start date</th>
                  <th scope="col">Direct deposit</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((e) => (
                  <tr key={e.employee_id}>
                    <td data-label="Name">
                      <a href={`#/employees/${encodeURIComponent(e.employee_id)}`} class="employee-link">
                        <strong>
                          {e.first_name} {e.last_name}
                        </strong>
                      </a>
                      <div class="small muted">
                        <code>{e.employee_id}</code>
                      </div>
                    </td>
                    <td data-label="Email" class="break">
                      {e.email}
                    </td>
                    <td data-label="Type">{e.employment_type.replace(/_/g, ' ')}</td>
                    <td data-label="Pay">
                      {e.pay_schedule}
                      <div class="small muted">{e.pay_group}</div>
                    </td>
                    <td data-label="Start date" class="nowrap">
                      {formatDate(e.start_date)}
                    </td>
                    <td data-label="Direct deposit">
                      {e.bank_account ? <BankAccount account={e.bank_account} /> : <span class="muted">none</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
      </section>
    </>
  );
}

/** The masked account; when the bank refused it, that it is invalid and why; when the bank corrected it, when. */
function BankAccount({ account }: { account: NonNullable<Employee['bank_account']> }) {
  return (
    <>
      <span class="nowrap">
        {account.account_type} ••{account.account_number_last4}
      </span>
      {account.status === 'invalid' && (
        <div class="small">
          <StatusBadge status="invalid" /> {account.status_reason ?? 'The bank returned a deposit to this account.'}
        </div>
      )}
      {account.corrected_at && (
        <div class="small muted">
          Corrected by the bank <When iso={account.corrected_at} />
        </div>
      )}
    </>
  );
}
