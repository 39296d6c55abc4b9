import type { components } from '../../../openapi/generated/api-types.js';
import {
  PAYROLL_STATES,
  PAYROLL_STATUSES,
  type PayrollStatus as LifecycleStatus,
  transition,
} from '../../../shared/domain/payroll-lifecycle.js';
import { ApiError, api, listPage, type Problem } from '../api.js';
import type { environmentOf } from '../session.js';
import type { Employee, Paystub, PayrollStatus } from '../types.js';
import { formatMoney } from '../ui.js';

/** What the runs pages read besides the shared types: the file's control totals, a dry run, an accepted run. */
export type DisbursementTotals = components['schemas']['Disbursement'];
export type DryRun = components['schemas']['PayrollDryRun'];
export type SubmittedPayroll = components['schemas']['SubmittedPayroll'];
export type PayrollEntry = components['schemas']['PayrollSubmission']['employees'][number];
export type Blocker = components['schemas']['PayrollBlocker'];

// ---- The lifecycle, as the service declares it (shared/domain/payroll-lifecycle.ts) -------------------------------

const declared = (status: string): (typeof PAYROLL_STATES)[LifecycleStatus] | undefined =>
  Object.hasOwn(PAYROLL_STATES, status) ? PAYROLL_STATES[status as LifecycleStatus] : undefined;

/** What the console calls a run's status: the lifecycle's own label ("Processed" for `completed`), never restated. */
export const statusLabel = (status: string): string => declared(status)?.label ?? status;

/** Every status, in the lifecycle's order, with its label: the runs list's filter. */
export const STATUS_OPTIONS: { value: PayrollStatus; label: string }[] = PAYROLL_STATUSES.map((value) => ({
  value,
  label: PAYROLL_STATES[value].label,
}));

/** A worker owes the run progress (pending, processing): the pages follow it until it ends. */
export const isUnfinished = (status: string): boolean => declared(status)?.inFlight ?? false;

/** Accepted, moving no money until a second key approves it. */
export const isAwaitingApproval = (status: string): boolean => status === 'awaiting_approval';

/** A run's outcome as a colour: the progress bar and the list use the same one. */
export type Tone = 'ok' | 'bad' | 'neutral' | 'info' | 'warn';
export function toneOf(status: PayrollStatus | string): Tone {
  switch (status) {
    case 'completed':
      return 'ok';
    case 'failed':
    case 'rejected':
      return 'bad';
    case 'cancelled':
      return 'neutral';
    case 'awaiting_approval':
      return 'warn';
    default:
      return 'info';
  }
}

/** Runs whose net pay never reached a file a bank may use: nothing was credited. */
export const isUnpaid = (status: string): boolean => (declared(status)?.terminal ?? false) && status !== 'completed';

/** The net pay of a run, said for what it is: in the file, to be paid, or not paid. */
export function netPayLabel(status: string, net: number): { amount: string; note: string } {
  const amount = formatMoney(net);
  if (status === 'completed') return { amount, note: 'in the bank file' };
  if (status === 'pending' || status === 'processing') return { amount, note: 'to pay' };
  if (status === 'awaiting_approval') return { amount, note: 'to pay once approved' };
  return { amount, note: 'not paid' };
}

/**
 * Whether the cancel endpoint accepts a run in `status` from a token of `environment`, as the lifecycle's `cancel`
 * transition and its guard say: a run awaiting approval moved nothing and may be cancelled anywhere; past approval
 * (pending, processing, completed) only in the sandbox. Anything else is `409 payroll_not_cancellable`.
 */
export function isCancellable(status: string, environment: ReturnType<typeof environmentOf>): boolean {
  if (!declared(status)) return false;
  return transition(status as LifecycleStatus, 'cancel', {
    // A token the console cannot place is treated as production: it is offered only what production allows.
    environment: environment === 'sandbox' ? 'sandbox' : 'production',
  }).ok;
}

/** What the file endpoint answers for a run that has none, by its status (README "The disbursement file"). */
export function fileAbsence(status: string): string | null {
  switch (status) {
    case 'rejected':
      return 'No NACHA file: the run was rejected by a compliance check (see the findings), so it will never have one. Nothing was credited.';
    case 'failed':
      return 'NACHA file withdrawn: the run failed, so no file was released and it must not reach a bank. Nothing was credited.';
    case 'cancelled':
      return 'NACHA file withdrawn: the run was cancelled, so its file (if one was written) must not reach a bank. Nothing was credited.';
    case 'awaiting_approval':
      return 'No NACHA file yet: nothing moves until the run is approved; the file is written when it is then processed.';
    case 'pending':
    case 'processing':
      return 'No NACHA file yet: it is written when the run completes.';
    default:
      return null;
  }
}

const EMPLOYEE_ID = /\bemp_[0-9a-hjkmnp-tv-z]{26}\b/g;

/** Every employee id a text names (a failure reason, a finding). */
export const employeeIdsIn = (text: string | null | undefined): string[] => [
  ...new Set(text ? (text.match(EMPLOYEE_ID) ?? []) : []),
];

/** A text with each employee id it names followed by the employee's name, when known. */
export function withNames(text: string, names: Map<string, string>): string {
  return text.replace(EMPLOYEE_ID, (id) => {
    const name = names.get(id);
    return name ? `${name} (${id})` : id;
  });
}

/**
 * The names of the employees `ids` lists, one `GET /v1/employees/{id}` each (distinct ids only, a few at a time).
 * `known` (names already read, e.g. from paystubs) are not asked again; a removed employee keeps its id.
 */
export async function loadNames(ids: string[], known: Map<string, string> = new Map()): Promise<Map<string, string>> {
  const names = new Map(known);
  const missing = [...new Set(ids)].filter((id) => !names.has(id)).slice(0, 50);
  const queue = [...missing];
  const worker = async () => {
    for (let id = queue.shift(); id; id = queue.shift()) {
      try {
        const { data } = await api<Employee>('GET', `/v1/employees/${encodeURIComponent(id)}`);
        names.set(id, `${data.first_name} ${data.last_name}`);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 404) throw err;
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return names;
}

/**
 * The names of a run's employees: one read each for a small run, else the employee list read page by page until
 * every id is found (a removed employee is in neither: it keeps its id, see `namesOfRemoved`).
 */
export async function loadRunNames(ids: string[]): Promise<Map<string, string>> {
  const wanted = new Set(ids);
  if (wanted.size <= 25) return loadNames([...wanted]);
  const names = new Map<string, string>();
  let next: string | null = null;
  let pages = 0;
  do {
    const page: { items: Employee[]; next_page_token: string | null } = await listPage<Employee>(
      '/v1/employees',
      'employees',
      { limit: 100, page_token: next },
    );
    for (const e of page.items)
      if (wanted.has(e.employee_id)) names.set(e.employee_id, `${e.first_name} ${e.last_name}`);
    next = page.next_page_token;
    pages++;
  } while (next && names.size < wanted.size && pages < 100);
  return names;
}

/**
 * The names of employees removed since (the employees API answers 404 for them): the name on their latest paystub,
 * which stays readable. One who was never paid has none anywhere: it keeps its id.
 */
export async function namesOfRemoved(ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  await Promise.all(
    [...new Set(ids)].slice(0, 20).map(async (id) => {
      try {
        const page = await listPage<Paystub>('/v1/paystubs', 'paystubs', { employee_id: id, limit: 1 });
        const name = page.items[0]?.employee_name;
        if (name) names.set(id, name);
      } catch {
        // No name to show: the id stands for it.
      }
    }),
  );
  return names;
}

export { timeLeft } from './time-left.js';

/** The cut-off is set in New York time (the bank's): an approve-by instant is said in it too. */
const newYork = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/New_York',
  dateStyle: 'medium',
  timeStyle: 'short',
});
export function formatNewYork(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${newYork.format(d)} New York time`;
}

/** A run's blockers by person: each employee's, in the run's order, then those of the run itself. */
export function blockersByPerson(blockers: Blocker[]): { employeeId: string | null; blockers: Blocker[] }[] {
  const groups = new Map<string | null, Blocker[]>();
  for (const b of blockers) {
    const key = b.employee_id ?? null;
    groups.set(key, [...(groups.get(key) ?? []), b]);
  }
  const people = [...groups].filter(([k]) => k !== null).map(([employeeId, list]) => ({ employeeId, blockers: list }));
  const run = groups.get(null);
  return run ? [...people, { employeeId: null, blockers: run }] : people;
}

/** The blockers a refused approval (422 `payroll_blocked`) carries in its details. */
export function blockersOf(details: Problem[]): Blocker[] {
  return details
    .filter((d): d is Problem & { code: string } => typeof d.code === 'string')
    .map((d) => d as unknown as Blocker);
}

/** Saves a blob under a name, through a temporary `blob:` link (no token in any URL). */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// ---- CSV ----------------------------------------------------------------------------------------------------------

/** The CSV's known columns and the entry field each fills; any other column is a named deduction. */
export const CSV_COLUMNS: { column: string; field: string; note: string }[] = [
  { column: 'employee_id', field: 'employee_id', note: 'required: the employee’s id (emp_…)' },
  { column: 'hours', field: 'hours_worked', note: 'required: hours worked in the period, up to two decimals' },
  { column: 'gross', field: 'gross_pay', note: 'required: gross pay, e.g. 3200.00' },
  { column: 'bonus', field: 'bonuses', note: 'optional: bonuses (blank is 0)' },
  { column: 'notes', field: 'notes', note: 'optional: up to 500 characters' },
];
const FIELD_OF = new Map(CSV_COLUMNS.map((c) => [c.column, c.field]));
const COLUMN_OF = new Map(CSV_COLUMNS.map((c) => [c.field, c.column]));

const USE = (column: string) => `Name it "${column}".`;
const NOT_IN_A_RUN = 'A run carries only hours, gross pay, bonuses and deductions: remove the column.';
/** Columns that look like pay or an employee's details, never deductions, with what to do instead. */
const NOT_A_DEDUCTION = new Map<string, string>([
  ['bonuses', USE('bonus')],
  ['gross_pay', USE('gross')],
  ['hours_worked', USE('hours')],
  ['employee', USE('employee_id')],
  ['id', USE('employee_id')],
  ['note', USE('notes')],
  ...['net', 'net_pay', 'pay', 'salary', 'wages', 'overtime', 'commission', 'tips', 'reimbursement', 'rate'].map(
    (c) => [c, `Pay goes in "gross" (and "bonus"). ${NOT_IN_A_RUN}`] as [string, string],
  ),
  ...['name', 'first_name', 'last_name', 'email', 'employee_name'].map(
    (c) => [c, `The run finds the employee by "employee_id" alone. ${NOT_IN_A_RUN}`] as [string, string],
  ),
]);

/** A header as a column name: trimmed, lower case, spaces and dashes as underscores (`Health Plan` → `health_plan`). */
export const normalizeHeader = (h: string): string =>
  h
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

export interface CsvRun {
  entries: PayrollEntry[];
  /** The file's line (1 = the header) of each entry, in order. */
  lines: number[];
  /** The deduction columns found. */
  deductionColumns: string[];
  /** Problems of the file itself (shape, headers), found before the API is asked. */
  problems: { line: number | null; column: string | null; message: string }[];
}

/**
 * A parsed CSV (header row, then one row per employee) turned into the body's entries. Cells are sent as written
 * (money and hours as numeric strings): the API's own validation judges them, so the page shows its exact rules.
 */
export function entriesOf(rows: Record<string, string>[], lines: number[], headers: string[]): CsvRun {
  const problems: CsvRun['problems'] = [];
  const columns = headers.map(normalizeHeader);
  for (const required of ['employee_id', 'hours', 'gross'])
    if (!columns.includes(required))
      problems.push({ line: 1, column: required, message: `The header has no "${required}" column.` });
  // Every other column is a named deduction, subtracted from pay: a column that names pay, or a field under another
  // spelling, would be subtracted by mistake, so it is refused with the column to use instead.
  for (const c of columns) {
    const instead = NOT_A_DEDUCTION.get(c);
    if (instead !== undefined)
      problems.push({
        line: 1,
        column: c,
        message: `The column "${c}" would be read as a deduction and subtracted from pay. ${instead}`,
      });
  }
  const deductionColumns = columns.filter((c) => c && !FIELD_OF.has(c) && !NOT_A_DEDUCTION.has(c));
  const entries: PayrollEntry[] = rows.map((row) => {
    const cell = (c: string) => (row[c] ?? '').trim();
    const entry: Record<string, unknown> = {
      employee_id: cell('employee_id'),
      gross_pay: cell('gross'),
      hours_worked: cell('hours'),
    };
    if (cell('bonus') !== '') entry.bonuses = cell('bonus');
    if (cell('notes') !== '') entry.notes = cell('notes');
    const deductions: Record<string, string> = {};
    for (const c of deductionColumns) if (cell(c) !== '') deductions[c] = cell(c);
    if (Object.keys(deductions).length > 0) entry.deductions = deductions;
    return entry as PayrollEntry;
  });
  if (rows.length === 0) problems.push({ line: null, column: null, message: 'The file has no employee row.' });
  return { entries, lines, deductionColumns, problems };
}

export interface RowProblem {
  line: number | null;
  column: string | null;
  field: string | null;
  message: string;
  code: string | null;
}

/**
 * The API's problems mapped back to the CSV: `employees[3].gross_pay` is the 4th entry, so its file line, column
 * `gross`; `employees[3].deductions.taxes` is column `taxes`. Problems of the run itself (dates) have no line.
 */
export function rowProblems(details: Problem[], lines: number[]): RowProblem[] {
  return details.map((d) => {
    const m = /^employees\[(\d+)\](?:\.([a-z_]+)(?:\.([a-z0-9_]+))?)?/.exec(d.field ?? '');
    if (!m) return { line: null, column: null, field: d.field ?? null, message: d.message, code: d.code ?? null };
    const index = Number(m[1]);
    const field = m[2];
    const column = field === 'deductions' ? (m[3] ?? 'deductions') : field ? (COLUMN_OF.get(field) ?? field) : null;
    return {
      line: lines[index] ?? index + 2,
      column,
      field: d.field ?? null,
      message: d.message,
      code: d.code ?? null,
    };
  });
}

/** An idempotency key for one upload: random, so a new upload never replays an older run. */
export const newIdempotencyKey = (): string => `dashboard-${crypto.randomUUID()}`;
