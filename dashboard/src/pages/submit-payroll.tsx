import Papa from 'papaparse';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { navigate } from '../router.js';
import { ErrorBox, Field, formatDate, formatMoney, PageTitle, TableRegion } from '../ui.js';
import { FundingHoldRefusal } from './money-back.js';
import {
  CSV_COLUMNS,
  type CsvRun,
  type DryRun,
  entriesOf,
  isAwaitingApproval,
  newIdempotencyKey,
  normalizeHeader,
  type RowProblem,
  rowProblems,
  statusLabel,
  type SubmittedPayroll,
} from './runs-model.js';

const SAMPLE = `employee_id,hours,gross,bonus,taxes,benefits,notes
emp_01kfz8d4w6t2m9q3r5v7x8y0ab,80,3200.00,150,640.50,120,includes on-call
emp_01kfz8d4w6t2m9q3r5v7x8y0ac,72.5,2900.00,,580.00,120,`;

interface Upload {
  name: string;
  run: CsvRun;
  /** One key per upload: a second click, or a retry after a lost answer, replays the same run. */
  key: string;
}

/**
 * Reads the CSV with papaparse: the header is the first non-blank row; each row keeps the line of the file it starts
 * on (counted from the text, so a quoted cell over several lines does not shift the lines after it; LF, CRLF and CR
 * line ends alike).
 */
export function readCsv(file: string): CsvRun {
  // A byte-order mark is no part of the first line (the parser drops it, so its positions start after it).
  const text = file.startsWith('\uFEFF') ? file.slice(1) : file;
  const records: { cells: string[]; line: number }[] = [];
  const problems: CsvRun['problems'] = [];
  let start = 0;
  let line = 1;
  Papa.parse<string[]>(text, {
    skipEmptyLines: false,
    step: (result) => {
      records.push({ cells: result.data, line });
      for (const e of result.errors)
        if (e.code !== 'UndetectableDelimiter') problems.push({ line, column: null, message: e.message });
      // A line ends at a line feed, or at a carriage return not followed by one (an old Mac file).
      for (let i = start; i < result.meta.cursor; i++) {
        const c = text.charCodeAt(i);
        if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) line++;
      }
      start = result.meta.cursor;
    },
  });
  let headers: string[] | null = null;
  const rows: Record<string, string>[] = [];
  const lines: number[] = [];
  records.forEach(({ cells, line: at }) => {
    if (cells.every((c) => c.trim() === '')) return;
    if (!headers) {
      headers = cells;
      return;
    }
    // A row wider than the header (an unquoted "3,200.00" is two cells) would shift every value after it into the
    // next column: refused by line, never guessed. Trailing empty cells are only a spreadsheet's padding.
    const width = cells.length - [...cells].reverse().findIndex((c) => c.trim() !== '');
    if (width > headers.length)
      problems.push({
        line: at,
        column: null,
        message: `The row has ${width} cells but the header has ${headers.length}: quote amounts written with a thousands separator ("3,200.00"), or remove the extra cells.`,
      });
    const row: Record<string, string> = {};
    headers.forEach((h, j) => {
      row[normalizeHeader(h)] = cells[j] ?? '';
    });
    rows.push(row);
    lines.push(at);
  });
  const run = entriesOf(rows, lines, headers ?? []);
  return { ...run, problems: [...problems, ...run.problems] };
}

/** `#/payrolls/new`: a run from a CSV, checked by a dry run (totals, every problem by row), then submitted once. */
export function SubmitPayrollPage() {
  const [upload, setUpload] = useState<Upload | null>(null);
  const [readError, setReadError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const [dry, setDry] = useState<{ body: string; result: DryRun } | null>(null);
  const [problems, setProblems] = useState<{ error: ApiError; rows: RowProblem[] } | null>(null);
  const [otherError, setOtherError] = useState<unknown>(null);
  const [submitting, setSubmitting] = useState(false);
  const [submitted, setSubmitted] = useState<SubmittedPayroll | null>(null);
  const inFlight = useRef<Promise<void> | null>(null);
  // The submit button goes when the run is accepted: focus moves to what replaced it.
  const submittedRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (submitted) submittedRef.current?.focus();
  }, [submitted]);
  const form = useRef<HTMLFormElement>(null);

  const bodyOf = (): Record<string, unknown> | null => {
    if (!upload || !form.current) return null;
    const value = (name: string) =>
      (form.current!.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null)?.value.trim() ?? '';
    return {
      type: value('type') || 'regular',
      pay_period_start: value('pay_period_start'),
      pay_period_end: value('pay_period_end'),
      pay_date: value('pay_date'),
      employees: upload.run.entries,
    };
  };

  const reset = () => {
    setDry(null);
    setProblems(null);
    setOtherError(null);
    setSubmitted(null);
  };

  const onFile = async (e: Event) => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0];
    reset();
    setReadError(null);
    if (!file) {
      setUpload(null);
      return;
    }
    try {
      const run = readCsv(await file.text());
      setUpload({ name: file.name, run, key: newIdempotencyKey() });
    } catch (err) {
      setUpload(null);
      setReadError(err instanceof Error ? err.message : String(err));
    }
  };

  const check = async (e: Event) => {
    e.preventDefault();
    const body = bodyOf();
    if (!body || !upload) return;
    reset();
    setChecking(true);
    try {
      const { data } = await api<DryRun>('POST', '/v1/payroll', { query: { dry_run: 'true' }, body });
      setDry({ body: JSON.stringify(body), result: data });
    } catch (err) {
      if (err instanceof ApiError && err.details.length > 0)
        setProblems({ error: err, rows: rowProblems(err.details, upload.run.lines) });
      else setOtherError(err);
    } finally {
      setChecking(false);
    }
  };

  const submit = () => {
    // A double click lands here twice: the second waits for the first, and both send the upload's one key.
    if (inFlight.current) return;
    const body = bodyOf();
    if (!body || !upload || !dry || JSON.stringify(body) !== dry.body) return;
    setSubmitting(true);
    setOtherError(null);
    inFlight.current = (async () => {
      try {
        const { data } = await api<SubmittedPayroll>('POST', '/v1/payroll', {
          body,
          headers: { 'Idempotency-Key': upload.key },
        });
        setSubmitted(data);
      } catch (err) {
        if (err instanceof ApiError && err.details.length > 0)
          setProblems({ error: err, rows: rowProblems(err.details, upload.run.lines) });
        else setOtherError(err);
      } finally {
        setSubmitting(false);
        inFlight.current = null;
      }
    })();
  };

  const fileProblems = upload?.run.problems ?? [];
  const stale = dry !== null && JSON.stringify(bodyOf()) !== dry.body;
  return (
    <>
      <p class="breadcrumb">
        <a href="#/payrolls">Payrolls</a> <span aria-hidden="true">›</span> Submit a run
      </p>
      <PageTitle subtitle="Upload a CSV, check it (a dry run: nothing is stored), then submit it once.">
        Submit a payroll run
      </PageTitle>

      <section class="card" aria-labelledby="csv-format-title">
        <h2 id="csv-format-title" class="h3">
          The CSV format
        </h2>
        <p>
          One header row, then one row per employee paid (an employee at most once). Columns, in any order (headers are
          case-insensitive):
        </p>
        <ul class="runs-columns">
          {CSV_COLUMNS.map((c) => (
            <li key={c.column}>
              <code>{c.column}</code> — {c.note}
            </li>
          ))}
          <li>
            any other column — a named deduction (<code>taxes</code>, <code>benefits</code>, <code>retirement</code>,{' '}
            <code>garnishments</code>, <code>other</code> or any snake_case name); blank means none
          </li>
        </ul>
        <p class="small muted">
          Amounts have at most two decimals and are never negative; net pay (gross + bonus − deductions) may not be
          below zero. Example:
        </p>
        <pre class="runs-sample">{SAMPLE}</pre>
      </section>

      <form ref={form} class="card form-grid" onSubmit={check} aria-labelledby="run-form-title">
        <h2 id="run-form-title" class="h3 runs-span">
          The run
        </h2>
        <Field id="run-start" label="Pay period start">
          <input id="run-start" name="pay_period_start" type="date" class="input" required onInput={reset} />
        </Field>
        <Field id="run-end" label="Pay period end">
          <input id="run-end" name="pay_period_end" type="date" class="input" required onInput={reset} />
        </Field>
        <Field id="run-pay-date" label="Pay date">
          <input id="run-pay-date" name="pay_date" type="date" class="input" required onInput={reset} />
        </Field>
        <Field
          id="run-type"
          label="Type"
          hint="Off-cycle: corrections and retro pay, outside the one-run-per-period rule."
        >
          <select id="run-type" name="type" class="input" onChange={reset} aria-describedby="run-type-hint">
            <option value="regular">regular</option>
            <option value="off_cycle">off-cycle</option>
          </select>
        </Field>
        <Field id="run-csv" label="CSV file">
          <input id="run-csv" name="csv" type="file" accept=".csv,text/csv" class="input" required onChange={onFile} />
        </Field>
        <div class="form-actions runs-span">
          <button type="submit" class="button button-primary" disabled={!upload || checking || fileProblems.length > 0}>
            {checking ? 'Checking…' : 'Check (dry run)'}
          </button>
        </div>
      </form>

      {readError && <ErrorBox error={new Error(readError)} title="The file could not be read" />}
      {upload && (
        <p class="small muted" data-testid="csv-summary">
          {upload.name}: {upload.run.entries.length} row{upload.run.entries.length === 1 ? '' : 's'}
          {upload.run.deductionColumns.length > 0 && <>, deductions: {upload.run.deductionColumns.join(', ')}</>}.
        </p>
      )}
      {fileProblems.length > 0 && (
        <div class="alert alert-error" role="alert" data-testid="csv-file-problems">
          <p class="alert-title">
            <strong>The file cannot be checked yet:</strong>
          </p>
          <ul class="problems">
            {fileProblems.map((p, i) => (
              <li key={i}>
                {p.line !== null && <>Line {p.line}: </>}
                {p.message}
              </li>
            ))}
          </ul>
        </div>
      )}

      {problems && <ProblemList error={problems.error} rows={problems.rows} />}
      <ErrorBox error={otherError} title="The run could not be checked or submitted" />
      <FundingHoldRefusal error={problems?.error ?? otherError} />

      {dry && !submitted && (
        <section class="card" aria-labelledby="dry-run-title" data-testid="dry-run">
          <h2 id="dry-run-title" class="h3">
            Dry run: the run is valid (nothing stored yet)
          </h2>
          <dl class="totals">
            <div>
              <dt>Employees</dt>
              <dd>{dry.result.employee_count}</dd>
            </div>
            <div>
              <dt>Gross pay</dt>
              <dd>{formatMoney(dry.result.totals.gross_pay)}</dd>
            </div>
            <div>
              <dt>Bonuses</dt>
              <dd>{formatMoney(dry.result.totals.bonuses)}</dd>
            </div>
            <div>
              <dt>Deductions</dt>
              <dd>{formatMoney(dry.result.totals.deductions)}</dd>
            </div>
            <div class="total-net">
              <dt>Net pay</dt>
              <dd>{formatMoney(dry.result.totals.net_pay)}</dd>
            </div>
          </dl>
          <p class="small">
            Deposits settle {formatDate(dry.result.effective_entry_date)}; the file is due at the bank{' '}
            {formatDate(dry.result.release_by)}.
          </p>
          {stale ? (
            <p class="alert alert-warn">The form changed since this check: check it again before submitting.</p>
          ) : (
            <button type="button" class="button button-primary" onClick={submit} disabled={submitting}>
              {submitting ? 'Submitting…' : `Submit the run (${formatMoney(dry.result.totals.net_pay)})`}
            </button>
          )}
          <p class="small muted">
            Sent with the idempotency key <code>{upload?.key}</code>: submitting this upload again replays the same run.
          </p>
        </section>
      )}

      {submitted && (
        <div class="alert alert-ok" role="status" data-testid="submitted" tabIndex={-1} ref={submittedRef}>
          <p>
            Submitted: run <code>{submitted.payroll_id}</code> is {statusLabel(submitted.status).toLowerCase()},{' '}
            {formatMoney(submitted.totals.net_pay)} net for {submitted.employee_count} employee
            {submitted.employee_count === 1 ? '' : 's'}.
            {isAwaitingApproval(submitted.status) &&
              ' It moves no money until it is approved on its page, with a key other than the one that submitted it.'}
          </p>
          <button
            type="button"
            class="button button-primary"
            onClick={() => navigate(`/payrolls/${encodeURIComponent(submitted.payroll_id)}`)}
          >
            Open the run
          </button>
        </div>
      )}
    </>
  );
}

function ProblemList({ error, rows }: { error: ApiError; rows: RowProblem[] }) {
  const sorted = [...rows].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return (
    <div class="alert alert-error" role="alert" data-testid="csv-problems">
      <p class="alert-title">
        <strong>
          {rows.length} problem{rows.length === 1 ? '' : 's'}:
        </strong>{' '}
        {error.message}{' '}
        <span class="muted">
          ({error.status} {error.code})
        </span>
      </p>
      <TableRegion label="Problems by CSV row">
        <table class="table responsive runs-problems">
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Column</th>
              <th scope="col">Problem</th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((p, i) => (
              <tr key={i} data-line={p.line ?? ''}>
                <td data-label="Line">{p.line === null ? 'the run' : `line ${p.line}`}</td>
                <td data-label="Column">
                  {p.column ? <code>{p.column}</code> : p.field ? <code>{p.field}</code> : '—'}
                </td>
                <td data-label="Problem">
                  {p.message}
                  {p.code && <span class="muted"> ({p.code})</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableRegion>
      {error.requestId && (
        <p class="muted small">
          Request id: <code>{error.requestId}</code>
        </p>
      )}
    </div>
  );
}
