import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, listPage, type Query } from './api.js';

const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
export const formatMoney = (amount: number): string => money.format(amount);

const dateTime = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short' });
const thisYear = new Intl.DateTimeFormat('en-US', {
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
});
const otherYear = new Intl.DateTimeFormat('en-US', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
});

/** A moment, in full ("Nov 21, 2026, 10:02 AM"), or compact for tables (the year only when it is not this one). */
export function formatDateTime(iso: string | null | undefined, compact = false): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  if (!compact) return dateTime.format(d);
  return (d.getFullYear() === new Date().getFullYear() ? thisYear : otherYear).format(d);
}

/** A table cell's moment: compact, with the full date-time as its tooltip and for assistive technology. */
export function When({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {formatDateTime(iso, true)}
    </time>
  );
}

/** A calendar date (`YYYY-MM-DD`) as written, without a time zone shifting it a day. */
const dateOnly = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' });
export function formatDate(day: string | null | undefined): string {
  if (!day) return '—';
  const d = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? day : dateOnly.format(d);
}

/** A pay period, with the year once when both ends share it: "Nov 1 – Nov 14, 2026". */
const monthDay = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
export function formatPeriod(start: string, end: string): string {
  if (start.slice(0, 4) !== end.slice(0, 4)) return `${formatDate(start)} – ${formatDate(end)}`;
  const d = new Date(`${start}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? `${start} – ${end}` : `${monthDay.format(d)} – ${formatDate(end)}`;
}

/** The envelope's error: its message, then every detail (field, message), and the request id to quote. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const e =
    error instanceof ApiError
      ? error
      : new ApiError(0, 'client_error', error instanceof Error ? error.message : String(error));
  return (
    <div class="alert alert-error" role="alert">
      <p class="alert-title">
        <strong>{title ?? 'The request failed'}:</strong> {e.message}
        {e.status > 0 && (
          <span class="muted">
            {' '}
            ({e.status} {e.code})
          </span>
        )}
      </p>
      {e.details.length > 0 && (
        <ul class="problems">
          {e.details.map((d, i) => (
            <li key={i}>
              {d.field && <code>{d.field}</code>} {d.field && '— '}
              {d.message}
              {d.code && <span class="muted"> ({d.code})</span>}
            </li>
          ))}
        </ul>
      )}
      {e.requestId && (
        <p class="muted small">
          Request id: <code>{e.requestId}</code>
        </p>
      )}
    </div>
  );
}

const TONE: Record<string, string> = {
  active: 'ok',
  completed: 'ok',
  succeeded: 'ok',
  issued: 'ok',
  scheduled: 'ok',
  pending: 'info',
  processing: 'info',
  awaiting_approval: 'warn',
  rotating: 'info',
  unreliable: 'warn',
  expired: 'warn',
  voided: 'warn',
  cancelled: 'neutral',
  disabled: 'neutral',
  revoked: 'neutral',
  failed: 'bad',
  rejected: 'bad',
  returned: 'bad',
  invalid: 'bad',
  // Files and money back: a file to send, one withdrawn; a funding debit re-debited or paid otherwise; a reversal.
  ready: 'info',
  transmitted: 'ok',
  acknowledged: 'ok',
  withdrawn: 'neutral',
  redebit_scheduled: 'info',
  resolved: 'ok',
  reversal_scheduled: 'warn',
  reversal_returned: 'bad',
  // The bank link: its last pass, a file found late, and what became of each file picked up from the bank.
  ok: 'ok',
  failing: 'bad',
  not_checked: 'info',
  not_set: 'neutral',
  late: 'warn',
  applied: 'ok',
  rejected_by_bank: 'bad',
  hash_mismatch: 'bad',
  unknown_file: 'warn',
  unreadable: 'bad',
};

/** A status as a coloured badge: its value, or the label a declaration gives it (a run's "Processed"). */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return (
    <span class={`badge badge-${TONE[status] ?? 'neutral'}`} data-status={status}>
      {label ?? status}
    </span>
  );
}

export function HttpStatus({ status }: { status: number }) {
  const tone = status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'ok';
  return <span class={`badge badge-${tone}`}>{status}</span>;
}

/**
 * A page's heading. It takes focus when the page opens, so a keyboard or screen-reader user lands on the new
 * content instead of staying on the link they followed.
 */
export function PageTitle({ children, subtitle }: { children: ComponentChildren; subtitle?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus({ preventScroll: false });
  }, []);
  return (
    <header class="page-header">
      <h1 ref={ref} tabIndex={-1}>
        {children}
      </h1>
      {subtitle && <p class="muted">{subtitle}</p>}
    </header>
  );
}

/** A wide table scrolls inside its own region, reachable by keyboard; below 640 px rows become cards. */
export function TableRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // A scrollable region must be focusable so a keyboard can scroll it (WCAG 2.1.1); a div keeps the table's layout.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the region scrolls, and only focus lets a keyboard scroll it
    // biome-ignore lint/a11y/useSemanticElements: a section would add a landmark per table; a labelled region is enough
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('copied');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <>
      <button type="button" class="button" onClick={copy} aria-label={label}>
        {copied === 'copied' ? 'Copied' : 'Copy'}
      </button>
      <span class="sr-only" role="status">
        {copied === 'copied'
          ? 'Copied to the clipboard'
          : copied === 'failed'
            ? 'Copy failed: select the text and copy it'
            : ''}
      </span>
    </>
  );
}

/** A secret shown once (an API key token, a webhook signing secret), with a copy button and a way to dismiss it. */
export function SecretOnce({
  title,
  value,
  note,
  onDone,
}: {
  title: string;
  value: string;
  note: string;
  onDone: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), [value]);
  return (
    // biome-ignore lint/a11y/useSemanticElements: the alert box is styled as a div; the role names it for screen readers
    <div class="alert alert-secret" role="region" aria-label={title} tabIndex={-1} ref={ref} data-testid="secret-once">
      <h2 class="h3">{title}</h2>
      <p>{note}</p>
      <div class="secret-row">
        <label class="sr-only" for="secret-value">
          {title}
        </label>
        <input
          id="secret-value"
          class="input mono"
          readOnly
          value={value}
          onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
        />
        <CopyButton text={value} label={`Copy: ${title}`} />
      </div>
      <button type="button" class="button" onClick={onDone}>
        I have copied it, hide it
      </button>
    </div>
  );
}

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change; `reload()` runs it again. Late answers of older runs are dropped. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const run = useRef(0);
  useEffect(() => {
    const id = ++run.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => id === run.current && setState({ data, loading: false }),
      (error: unknown) => id === run.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/**
 * A list read a page at a time (`GET <path>`, its items under `key`): the first page again whenever the filters
 * change, and the next appended on request, its failure kept apart from the first page's.
 */
export function usePagedList<T>(path: string, key: string, filters: Query, limit: number) {
  const [extra, setExtra] = useState<{ items: T[]; next: string | null } | null>(null);
  const [moreError, setMoreError] = useState<unknown>(null);
  const [moreLoading, setMoreLoading] = useState(false);
  // Each first page starts a generation: a "load more" answered after the filters changed (or a refresh) belongs to
  // the list before and is dropped, never appended to the new one.
  const generation = useRef(0);
  const first = useAsync(async () => {
    generation.current++;
    setExtra(null);
    setMoreError(null);
    return listPage<T>(path, key, { ...filters, limit });
  }, [path, JSON.stringify(filters)]);
  const items = [...(first.data?.items ?? []), ...(extra?.items ?? [])];
  // While a first page loads, the token in hand is the previous list's: nothing more to ask for yet.
  const next = first.loading ? null : extra ? extra.next : (first.data?.next_page_token ?? null);
  const loadMore = async () => {
    const started = generation.current;
    setMoreLoading(true);
    setMoreError(null);
    try {
      const page = await listPage<T>(path, key, { ...filters, limit, page_token: next });
      if (started !== generation.current) return;
      setExtra((old) => ({ items: [...(old?.items ?? []), ...page.items], next: page.next_page_token }));
    } catch (err) {
      if (started === generation.current) setMoreError(err);
    } finally {
      setMoreLoading(false);
    }
  };
  return { first, items, next, loadMore, moreLoading, moreError };
}

/**
 * One resource (`GET <path>`) read once, then again every second while `moving` says it is still changing (a run
 * being processed, an event with deliveries pending). `data` is the latest read, or what `set` was given (the answer
 * of an action on it); a failed refresh is reported apart (`pollError`) and retried.
 */
export function useLiveResource<T>(path: string, moving: (data: T) => boolean) {
  const loaded = useAsync(async () => (await api<T>('GET', path)).data, [path]);
  const [live, setLive] = useState<T | undefined>(undefined);
  const [pollError, setPollError] = useState<unknown>(null);
  const data = live ?? loaded.data;
  usePolling(
    async () => {
      try {
        setLive((await api<T>('GET', path)).data);
        setPollError(null);
      } catch (err) {
        setPollError(err);
        throw err;
      }
    },
    1000,
    data !== undefined && moving(data),
  );
  return { data, set: setLive, loaded, pollError };
}

/** The current time, renewed every `ms` while `active`: what a "time left" is counted from. */
export function useNow(ms: number, active = true): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms, active]);
  return now;
}

/** Calls `fn` every `ms` while `active`, never overlapping itself. */
export function usePolling(fn: () => Promise<unknown>, ms: number, active: boolean): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (!active) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const tick = async () => {
      try {
        await saved.current();
      } catch {
        // The page shows the error; polling goes on.
      }
      if (!stopped) timer = setTimeout(tick, ms);
    };
    timer = setTimeout(tick, ms);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [active, ms]);
}

export function Field({
  id,
  label,
  hint,
  children,
}: {
  id: string;
  label: string;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

/**
 * A list page's filter card: a "Filters" heading, the page's fields, and Apply / Clear. `onApply` gets the form
 * (read it with `formValue`); Clear resets the fields and calls `onClear`.
 */
export function FilterForm({
  titleId,
  onApply,
  onClear,
  children,
}: {
  titleId: string;
  onApply: (form: HTMLFormElement) => void;
  onClear: () => void;
  children: ComponentChildren;
}) {
  const submit = (e: Event) => {
    e.preventDefault();
    onApply(e.currentTarget as HTMLFormElement);
  };
  return (
    <section class="card" aria-labelledby={titleId}>
      <h2 id={titleId} class="h3">
        Filters
      </h2>
      <form class="form-grid filters" onSubmit={submit} onReset={onClear}>
        {children}
        <div class="form-actions">
          <button type="submit" class="button button-primary">
            Apply filters
          </button>
          <button type="reset" class="button">
            Clear
          </button>
        </div>
      </form>
    </section>
  );
}

/** A list section's heading row: its title (the section's label, by `titleId`) and a Refresh button. */
export function SectionHead({
  titleId,
  title,
  onRefresh,
  refreshing,
}: {
  titleId: string;
  title: string;
  onRefresh: () => void;
  refreshing?: boolean;
}) {
  return (
    <div class="section-head">
      <h2 id={titleId}>{title}</h2>
      <button type="button" class="button" onClick={onRefresh} disabled={refreshing}>
        Refresh
      </button>
    </div>
  );
}

export function LoadMore({
  next,
  loading,
  onClick,
  label,
}: {
  next: string | null;
  loading: boolean;
  onClick: () => void;
  label: string;
}) {
  if (!next) return null;
  return (
    <p>
      <button type="button" class="button" onClick={onClick} disabled={loading}>
        {loading ? 'Loading…' : label}
      </button>
    </p>
  );
}

/** The value of a form field by name, trimmed ('' when absent). */
export function formValue(form: HTMLFormElement, name: string): string {
  const el = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null;
  return el ? el.value.trim() : '';
}

/**
 * The envelope's details by field (`originator.immediate_origin`, `bank_account.routing_number`), each shown next
 * to its input and tied to it with aria-describedby.
 */
export function fieldProblems(error: unknown) {
  const problems =
    error instanceof ApiError
      ? new Map(error.details.filter((d) => d.field).map((d) => [d.field!, d.message]))
      : new Map<string, string>();
  const problem = (field: string, id: string) =>
    problems.has(field) ? (
      <p class="field-error" id={`${id}-error`}>
        {problems.get(field)}
      </p>
    ) : null;
  const invalid = (field: string, id: string, hinted = false) => {
    const describedBy = [hinted && `${id}-hint`, problems.has(field) && `${id}-error`].filter(Boolean).join(' ');
    return {
      'aria-invalid': problems.has(field) ? ('true' as const) : undefined,
      'aria-describedby': describedBy || undefined,
    };
  };
  return { problem, invalid };
}

/**
 * A button replaced by its confirmation question, and the question by the button: focus follows, so the keyboard
 * stays where the reader is instead of falling back to the top of the page. `back`: whether leaving the question
 * returns focus to the button (not when an outcome or a refusal took its place).
 */
export function useConfirmFocus(confirming: boolean, back: () => boolean = () => true) {
  const confirmRef = useRef<HTMLButtonElement>(null);
  const askRef = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  const backRef = useRef(back);
  backRef.current = back;
  useEffect(() => {
    if (confirming) confirmRef.current?.focus();
    else if (asked.current && backRef.current()) askRef.current?.focus();
    asked.current = confirming;
  }, [confirming]);
  return { confirmRef, askRef };
}
