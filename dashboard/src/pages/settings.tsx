import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { type FundingAccount, fundingHoldOf, type Originator, type Settings, type SettingsUpdate } from '../types.js';
import { ErrorBox, Field, fieldProblems, formatMoney, formValue, PageTitle, useAsync, When } from '../ui.js';
import { BankLinkCard } from './bank-link.js';
import { FundingHoldBanner } from './money-back.js';

type OriginatorField = keyof Originator;

/** The originator as the NACHA file carries it: what each field is, who assigns it, and how wide it is. */
const ORIGINATOR_FIELDS: { name: OriginatorField; label: string; hint: string; maxLength: number; digits?: true }[] = [
  {
    name: 'company_name',
    label: 'Company name',
    maxLength: 16,
    hint: 'The name on employees’ bank statements. Up to 16 characters, stored uppercase.',
  },
  {
    name: 'company_identification',
    label: 'Company identification',
    maxLength: 10,
    hint: 'Assigned by your bank. 10 digits or uppercase letters.',
  },
  {
    name: 'originating_dfi_identification',
    label: 'Originating DFI',
    maxLength: 8,
    digits: true,
    hint: 'The first 8 digits of your bank’s routing number.',
  },
  {
    name: 'immediate_destination',
    label: 'Immediate destination',
    maxLength: 9,
    digits: true,
    hint: 'Given by your bank: the routing number files are sent to. 9 digits.',
  },
  {
    name: 'immediate_destination_name',
    label: 'Immediate destination name',
    maxLength: 23,
    hint: 'That bank’s name. Up to 23 characters.',
  },
  {
    name: 'immediate_origin',
    label: 'Immediate origin',
    maxLength: 10,
    hint: 'Assigned by your bank. 10 digits or uppercase letters (or a space and 9).',
  },
  {
    name: 'immediate_origin_name',
    label: 'Immediate origin name',
    maxLength: 23,
    hint: 'Your name as your bank knows it. Up to 23 characters.',
  },
];

const inputId = (name: string) => `settings-${name.replace(/_/g, '-')}`;

/** What the API answers about the funding account, and all it ever will: the last 4 digits, never more. */
export function maskedAccount(a: FundingAccount): string {
  return `${a.account_type} ••••${a.account_number_last4} · routing ${a.routing_number}`;
}

/** An input's value as sent: trimmed, but a leading space is part of an immediate origin (" 123456789"). */
const cleaned = (name: OriginatorField, value: string) =>
  name === 'immediate_origin' ? value.trimEnd() : value.trim();

export function SettingsPage() {
  const loaded = useAsync(async () => (await api<Settings>('GET', '/v1/settings')).data, []);
  const [saved, setSaved] = useState<Settings | null>(null);
  const [edits, setEdits] = useState<Partial<Record<OriginatorField, string>>>({});
  const [originatorError, setOriginatorError] = useState<unknown>(null);
  const [fundingError, setFundingError] = useState<unknown>(null);
  const [busy, setBusy] = useState<'originator' | 'funding' | 'remove' | null>(null);
  const [notice, setNotice] = useState('');
  const settings = saved ?? loaded.data;
  const originatorFields = fieldProblems(originatorError);
  const fundingFields = fieldProblems(fundingError);

  const patch = async (body: SettingsUpdate): Promise<Settings> => {
    const { data } = await api<Settings>('PATCH', '/v1/settings', { body });
    setSaved(data);
    return data;
  };

  const saveOriginator = async (e: Event) => {
    e.preventDefault();
    if (!settings) return;
    setNotice('');
    setOriginatorError(null);
    // Only the fields that differ from the stored originator: the API merges them field by field.
    const changed = ORIGINATOR_FIELDS.flatMap((f) => {
      const edit = edits[f.name];
      if (edit === undefined) return [];
      const value = cleaned(f.name, edit);
      return value === settings.originator[f.name] ? [] : [{ field: f, value }];
    });
    if (changed.length === 0) {
      setNotice('Nothing to save: no originator field changed.');
      return;
    }
    setBusy('originator');
    try {
      await patch({ originator: Object.fromEntries(changed.map((c) => [c.field.name, c.value])) });
      setEdits({});
      setNotice(`Originator saved: ${changed.map((c) => c.field.label.toLowerCase()).join(', ')}.`);
    } catch (err) {
      setOriginatorError(err);
    } finally {
      setBusy(null);
    }
  };

  const setFunding = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setNotice('');
    setFundingError(null);
    setBusy('funding');
    try {
      const data = await patch({
        funding_account: {
          routing_number: formValue(form, 'routing_number'),
          account_number: formValue(form, 'account_number'),
          account_type: formValue(form, 'account_type') === 'savings' ? 'savings' : 'checking',
        },
      });
      // The full account number leaves the page: only the API's last 4 digits remain.
      form.reset();
      setNotice(data.funding_account ? `Funding account set: ${maskedAccount(data.funding_account)}.` : '');
    } catch (err) {
      setFundingError(err);
    } finally {
      setBusy(null);
    }
  };

  const removeFunding = async () => {
    if (!confirm('Remove the funding account? Files after this carry credits only.')) return;
    setNotice('');
    setFundingError(null);
    setBusy('remove');
    try {
      await patch({ funding_account: null });
      setNotice('Funding account removed: files carry credits only.');
    } catch (err) {
      setFundingError(err);
    } finally {
      setBusy(null);
    }
  };

  // The API names the fields still holding their creation placeholder (production only).
  const placeholders = settings
    ? ORIGINATOR_FIELDS.filter((f) => settings.originator_placeholders.includes(f.name))
    : [];
  const { problem, invalid } = originatorFields;

  return (
    <>
      <PageTitle subtitle="The NACHA originator your disbursement files carry, the account they draw on, the bank link that delivers them, the values employees must match, how runs are approved, how long files are kept, and the compliance caps.">
        Settings
      </PageTitle>
      <p class="small" data-testid="settings-explainer">
        With a funding account, each file is balanced by one offset debit to it; production organizations must replace
        every placeholder (all zeros, NOT CONFIGURED) before payroll is accepted.
      </p>
      <p role="status" class={notice ? 'alert alert-ok' : 'sr-only'}>
        {notice}
      </p>
      <ErrorBox error={loaded.error} title="The settings could not be loaded" />
      {loaded.loading && !settings && <p class="muted">Loading settings…</p>}

      <FundingHoldBanner hold={fundingHoldOf(settings)} />
      {settings && placeholders.length > 0 && (
        <div class="alert alert-warn">
          <p>
            <strong>Payroll is refused until every placeholder is replaced:</strong>{' '}
            {placeholders.map((f) => f.label.toLowerCase()).join(', ')}.
          </p>
        </div>
      )}

      {settings && (
        <section class="card" aria-labelledby="originator-title">
          <h2 id="originator-title">NACHA originator</h2>
          <p class="small muted">
            What each file’s header and batch records carry. Your bank gives you these values when it sets up ACH
            origination.
          </p>
          <ErrorBox error={originatorError} title="The originator was not saved" />
          <form onSubmit={saveOriginator} noValidate>
            <div class="form-grid">
              {ORIGINATOR_FIELDS.map((f) => {
                const id = inputId(f.name);
                const field = `originator.${f.name}`;
                return (
                  <Field key={f.name} id={id} label={f.label} hint={f.hint}>
                    <input
                      id={id}
                      name={f.name}
                      class="input mono"
                      maxLength={f.maxLength}
                      autoComplete="off"
                      spellcheck={false}
                      inputMode={f.digits ? 'numeric' : undefined}
                      value={edits[f.name] ?? settings.originator[f.name]}
                      onInput={(e) => {
                        const value = (e.currentTarget as HTMLInputElement).value;
                        setEdits((prev) => ({ ...prev, [f.name]: value }));
                      }}
                      {...invalid(field, id, true)}
                    />
                    {problem(field, id)}
                  </Field>
                );
              })}
              <div class="form-actions">
                <button type="submit" class="button button-primary" disabled={busy !== null}>
                  {busy === 'originator' ? 'Saving…' : 'Save originator'}
                </button>
                <button
                  type="button"
                  class="button"
                  disabled={busy !== null || Object.keys(edits).length === 0}
                  onClick={() => {
                    setEdits({});
                    setOriginatorError(null);
                  }}
                >
                  Undo changes
                </button>
              </div>
            </div>
          </form>
          <p class="small muted">
            Last updated <When iso={settings.updated_at} />
          </p>
        </section>
      )}

      {settings && (
        <section class="card" aria-labelledby="funding-title">
          <h2 id="funding-title">Funding account</h2>
          <ErrorBox error={fundingError} title="The funding account was not changed" />
          <div class="funding-current">
            {settings.funding_account ? (
              <p data-testid="funding-account">
                <strong class="mono">{maskedAccount(settings.funding_account)}</strong>
              </p>
            ) : (
              <p data-testid="funding-account">No funding account: files carry credits only.</p>
            )}
            {settings.funding_account && (
              <button type="button" class="button button-danger" onClick={removeFunding} disabled={busy !== null}>
                {busy === 'remove' ? 'Removing…' : 'Remove'}
              </button>
            )}
          </div>
          <form onSubmit={setFunding} noValidate aria-labelledby="funding-form-title">
            <h3 id="funding-form-title" class="h3">
              {settings.funding_account ? 'Replace the funding account' : 'Set a funding account'}
            </h3>
            <div class="form-grid">
              <Field id="funding-routing" label="Routing number" hint="9 digits (ABA)">
                <input
                  id="funding-routing"
                  name="routing_number"
                  class="input mono"
                  inputMode="numeric"
                  autoComplete="off"
                  maxLength={9}
                  {...fundingFields.invalid('funding_account.routing_number', 'funding-routing', true)}
                />
                {fundingFields.problem('funding_account.routing_number', 'funding-routing')}
              </Field>
              <Field id="funding-account" label="Account number" hint="4 to 17 digits. Only the last 4 show again.">
                <input
                  id="funding-account"
                  name="account_number"
                  class="input mono"
                  inputMode="numeric"
                  autoComplete="off"
                  maxLength={17}
                  {...fundingFields.invalid('funding_account.account_number', 'funding-account', true)}
                />
                {fundingFields.problem('funding_account.account_number', 'funding-account')}
              </Field>
              <Field id="funding-type" label="Account type">
                <select
                  id="funding-type"
                  name="account_type"
                  class="input"
                  {...fundingFields.invalid('funding_account.account_type', 'funding-type')}
                >
                  <option value="checking">checking</option>
                  <option value="savings">savings</option>
                </select>
                {fundingFields.problem('funding_account.account_type', 'funding-type')}
              </Field>
              <div class="form-actions">
                <button type="submit" class="button button-primary" disabled={busy !== null}>
                  {busy === 'funding' ? 'Saving…' : 'Save funding account'}
                </button>
              </div>
            </div>
          </form>
        </section>
      )}

      {settings && (
        <BankLinkCard
          settings={settings}
          onSaved={async (body, message) => {
            setNotice('');
            await patch(body);
            setNotice(message);
          }}
        />
      )}

      {settings && (
        <ConfiguredValues
          settings={settings}
          onSaved={async (body, message) => {
            await patch(body);
            setNotice(message);
          }}
        />
      )}
      {settings && (
        <ApprovalSettings
          settings={settings}
          onSaved={async (body, message) => {
            await patch(body);
            setNotice(message);
          }}
        />
      )}
      {settings && (
        <FileRetention
          settings={settings}
          onSaved={async (body, message) => {
            await patch(body);
            setNotice(message);
          }}
        />
      )}
      {settings && (
        <ComplianceCaps
          settings={settings}
          onSaved={async (body, message) => {
            await patch(body);
            setNotice(message);
          }}
        />
      )}
    </>
  );
}

type ListName = 'employment_types' | 'pay_groups' | 'pay_schedules';
const LISTS: { name: ListName; label: string; hint: string }[] = [
  {
    name: 'employment_types',
    label: 'Employment types',
    hint: 'One a line. An employee’s employment_type must match one.',
  },
  { name: 'pay_groups', label: 'Pay groups', hint: 'One a line. An employee’s pay_group must match one.' },
  { name: 'pay_schedules', label: 'Pay schedules', hint: 'One a line. An employee’s pay_schedule must match one.' },
];

type CapName = 'max_net_pay_per_employee' | 'max_payroll_total';
const CAPS: { name: CapName; label: string; hint: string }[] = [
  {
    name: 'max_net_pay_per_employee',
    label: 'Most net pay per employee',
    hint: 'In dollars. A run paying one employee more is refused.',
  },
  { name: 'max_payroll_total', label: 'Most net pay per run', hint: 'In dollars. A run totalling more is refused.' },
];

const listId = (name: string) => `settings-${name.replace(/_/g, '-')}`;
const lines = (text: string) =>
  text
    .split('\n')
    .map((v) => v.trim())
    .filter(Boolean);
const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * The API's problems of one field and of its items (`pay_groups`, `pay_groups[2]`), shown next to the field: an
 * item's problem says which line it is.
 */
function problemsOf(error: unknown, field: string, sent?: string): string[] {
  if (!(error instanceof ApiError)) return [];
  // The list sent leaves blank lines out: item i is the i-th line with something on it.
  const lineOf = (i: number) =>
    (sent ?? '')
      .split('\n')
      .map((v, n) => (v.trim() ? n + 1 : 0))
      .filter(Boolean)[i] ?? i + 1;
  return error.details.flatMap((d) => {
    if (d.field === field) return [d.message];
    const item = d.field ? new RegExp(`^${field}\\[(\\d+)\\]$`).exec(d.field) : null;
    return item ? [`Line ${lineOf(Number(item[1]))}: ${d.message}`] : [];
  });
}

function FieldProblems({ id, messages }: { id: string; messages: string[] }) {
  if (messages.length === 0) return null;
  return (
    <p class="field-error" id={`${id}-error`}>
      {messages.join(' ')}
    </p>
  );
}

const describedBy = (id: string, messages: string[]) => ({
  'aria-invalid': messages.length > 0 ? ('true' as const) : undefined,
  'aria-describedby': [`${id}-hint`, messages.length > 0 && `${id}-error`].filter(Boolean).join(' '),
});

type Save = (body: SettingsUpdate, message: string) => Promise<void>;

/** A form remounted after its save loses the focused button: the new one takes focus back. */
function useFocusAfterSave(saves: number) {
  const ref = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (saves > 0) ref.current?.focus();
  }, [saves]);
  return ref;
}

/** The values employees' employment type, pay group and pay schedule must match: a PATCH replaces each list sent. */
function ConfiguredValues({ settings, onSaved }: { settings: Settings; onSaved: Save }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [nothing, setNothing] = useState(false);
  // Counts this form's saves: it starts again from what the API stored, and another form's save leaves it alone.
  const [saves, setSaves] = useState(0);
  const saveButton = useFocusAfterSave(saves);
  // The lists as typed when last saved, to name the line of an item the API refuses.
  const [sent, setSent] = useState<Record<string, string>>({});
  const save = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setError(null);
    setNothing(false);
    setSent(Object.fromEntries(LISTS.map((l) => [l.name, formValue(form, l.name)])));
    const changed = LISTS.filter((l) => !sameList(lines(formValue(form, l.name)), settings[l.name]));
    if (changed.length === 0) {
      setNothing(true);
      return;
    }
    setBusy(true);
    try {
      await onSaved(
        Object.fromEntries(changed.map((l) => [l.name, lines(formValue(form, l.name))])),
        `Saved: ${changed.map((l) => l.label.toLowerCase()).join(', ')}.`,
      );
      setSaves((n) => n + 1);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="values-title">
      <h2 id="values-title">Employee values</h2>
      <p class="small muted">
        What an employee’s employment type, pay group and pay schedule may be (matched exactly, case included). Removing
        a value leaves the employees who have it as they are.
      </p>
      <ErrorBox error={error} title="The values were not saved" />
      {nothing && <p class="muted">Nothing to save: no list changed.</p>}
      <form key={saves} onSubmit={save} noValidate>
        <div class="form-grid">
          {LISTS.map((l) => {
            const id = listId(l.name);
            const messages = problemsOf(error, l.name, sent[l.name]);
            return (
              <Field key={l.name} id={id} label={l.label} hint={l.hint}>
                <textarea
                  id={id}
                  name={l.name}
                  class="input mono"
                  rows={Math.max(3, settings[l.name].length + 1)}
                  spellcheck={false}
                  defaultValue={settings[l.name].join('\n')}
                  {...describedBy(id, messages)}
                />
                <FieldProblems id={id} messages={messages} />
              </Field>
            );
          })}
          <div class="form-actions">
            <button ref={saveButton} type="submit" class="button button-primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save values'}
            </button>
          </div>
        </div>
      </form>
    </section>
  );
}

/** The compliance caps a run is checked against before anything is paid. */
function ComplianceCaps({ settings, onSaved }: { settings: Settings; onSaved: Save }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [nothing, setNothing] = useState(false);
  // Counts this form's saves: it starts again from what the API stored, and another form's save leaves it alone.
  const [saves, setSaves] = useState(0);
  const saveButton = useFocusAfterSave(saves);
  const save = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setError(null);
    setNothing(false);
    // Sent as typed (a numeric string): the API parses money exactly, and says what is wrong with it.
    const changed = CAPS.filter((c) => {
      const value = formValue(form, c.name).replace(/[$,]/g, '');
      return value === '' || Number(value) !== settings[c.name];
    });
    if (changed.length === 0) {
      setNothing(true);
      return;
    }
    setBusy(true);
    try {
      await onSaved(
        Object.fromEntries(changed.map((c) => [c.name, formValue(form, c.name).replace(/[$,]/g, '')])),
        `Saved: ${changed.map((c) => c.label.toLowerCase()).join(', ')}.`,
      );
      setSaves((n) => n + 1);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="caps-title">
      <h2 id="caps-title">Compliance caps</h2>
      <p class="small muted">
        Checked when a run is submitted: now {formatMoney(settings.max_net_pay_per_employee)} per employee and{' '}
        {formatMoney(settings.max_payroll_total)} per run.
      </p>
      <ErrorBox error={error} title="The caps were not saved" />
      {nothing && <p class="muted">Nothing to save: no cap changed.</p>}
      <form key={saves} onSubmit={save} noValidate>
        <div class="form-grid">
          {CAPS.map((c) => {
            const id = listId(c.name);
            const messages = problemsOf(error, c.name);
            return (
              <Field key={c.name} id={id} label={c.label} hint={c.hint}>
                <input
                  id={id}
                  name={c.name}
                  class="input mono"
                  inputMode="decimal"
                  autoComplete="off"
                  defaultValue={settings[c.name].toFixed(2)}
                  {...describedBy(id, messages)}
                />
                <FieldProblems id={id} messages={messages} />
              </Field>
            );
          })}
          <div class="form-actions">
            <button ref={saveButton} type="submit" class="button button-primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save caps'}
            </button>
          </div>
        </div>
      </form>
    </section>
  );
}

const APPROVAL_MODES: { value: Settings['payroll_approval']; label: string }[] = [
  { value: 'automatic', label: 'Automatic' },
  { value: 'required', label: 'Required (dual control)' },
];

/**
 * Dual control (`payroll_approval`): whether a run waits, moving nothing, until a key other than its submitter's
 * approves it, and the time of day (New York) it must be approved by on its release day (`approval_cutoff_time`).
 */
function ApprovalSettings({ settings, onSaved }: { settings: Settings; onSaved: Save }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [nothing, setNothing] = useState(false);
  const [saves, setSaves] = useState(0);
  const saveButton = useFocusAfterSave(saves);
  const save = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setError(null);
    setNothing(false);
    const mode = formValue(form, 'payroll_approval');
    const cutoff = formValue(form, 'approval_cutoff_time');
    const body: SettingsUpdate = {};
    const changed: string[] = [];
    if (mode !== settings.payroll_approval) {
      body.payroll_approval = mode as Settings['payroll_approval'];
      changed.push('payroll approval');
    }
    if (cutoff !== settings.approval_cutoff_time) {
      // Sent as typed: the API says what a cut-off time must look like.
      body.approval_cutoff_time = cutoff;
      changed.push('approval cut-off time');
    }
    if (changed.length === 0) {
      setNothing(true);
      return;
    }
    setBusy(true);
    try {
      await onSaved(body, `Saved: ${changed.join(', ')}.`);
      setSaves((n) => n + 1);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const modeId = listId('payroll_approval');
  const cutoffId = listId('approval_cutoff_time');
  const modeProblems = problemsOf(error, 'payroll_approval');
  const cutoffProblems = problemsOf(error, 'approval_cutoff_time');
  return (
    <section class="card" aria-labelledby="approval-title">
      <h2 id="approval-title">Payroll approval</h2>
      <p class="small muted" data-testid="approval-now">
        Now{' '}
        {settings.payroll_approval === 'required'
          ? `required: each run waits, moving no money, until a key other than the one that submitted it approves it, by ${settings.approval_cutoff_time} New York time on its release-by day.`
          : 'automatic: a run is approved when it is accepted.'}{' '}
        A new production organization starts with approval required.
      </p>
      <ErrorBox error={error} title="The approval settings were not saved" />
      {nothing && <p class="muted">Nothing to save: no approval setting changed.</p>}
      <form key={saves} onSubmit={save} noValidate>
        <div class="form-grid">
          <Field
            id={modeId}
            label="Approval of each run"
            hint="Automatic: a run is approved when it is accepted. Required: another key approves each run before anything moves; the key that submitted it never can."
          >
            <select id={modeId} name="payroll_approval" class="input" {...describedBy(modeId, modeProblems)}>
              {APPROVAL_MODES.map((m) => (
                <option key={m.value} value={m.value} selected={m.value === settings.payroll_approval}>
                  {m.label}
                </option>
              ))}
            </select>
            <FieldProblems id={modeId} messages={modeProblems} />
          </Field>
          <Field
            id={cutoffId}
            label="Approval cut-off time"
            hint="HH:MM, 24-hour, New York time: a run must be approved by this time on its release-by day."
          >
            <input
              id={cutoffId}
              name="approval_cutoff_time"
              class="input mono"
              inputMode="numeric"
              autoComplete="off"
              maxLength={5}
              defaultValue={settings.approval_cutoff_time}
              {...describedBy(cutoffId, cutoffProblems)}
            />
            <FieldProblems id={cutoffId} messages={cutoffProblems} />
          </Field>
          <div class="form-actions">
            <button ref={saveButton} type="submit" class="button button-primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save approval settings'}
            </button>
          </div>
        </div>
      </form>
    </section>
  );
}

/** How long each NACHA file is kept under a retention lock once written (`file_retention_days`, 730 to 3650). */
function FileRetention({ settings, onSaved }: { settings: Settings; onSaved: Save }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [nothing, setNothing] = useState(false);
  const [saves, setSaves] = useState(0);
  const saveButton = useFocusAfterSave(saves);
  const save = async (e: Event) => {
    e.preventDefault();
    const typed = formValue(e.currentTarget as HTMLFormElement, 'file_retention_days').replace(/,/g, '');
    setError(null);
    setNothing(false);
    if (typed !== '' && Number(typed) === settings.file_retention_days) {
      setNothing(true);
      return;
    }
    setBusy(true);
    try {
      // A whole number is sent as one; anything else as typed, for the API to say what it must be.
      const value = /^\d+$/.test(typed) ? Number(typed) : typed;
      await onSaved({ file_retention_days: value as number }, 'Saved: file retention.');
      setSaves((n) => n + 1);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const id = listId('file_retention_days');
  const messages = problemsOf(error, 'file_retention_days');
  return (
    <section class="card" aria-labelledby="retention-title">
      <h2 id="retention-title">File retention</h2>
      <p class="small muted" data-testid="retention-now">
        Each NACHA file is kept under a retention lock for {settings.file_retention_days} days (about{' '}
        {Math.round((settings.file_retention_days / 365) * 10) / 10} years) once written. A cancelled or failed run’s
        file is destroyed whatever the lock.
      </p>
      <ErrorBox error={error} title="The file retention was not saved" />
      {nothing && <p class="muted">Nothing to save: the retention did not change.</p>}
      <form key={saves} onSubmit={save} noValidate>
        <div class="form-grid">
          <Field
            id={id}
            label="File retention (days)"
            hint="730 to 3650 days: at least two years, NACHA's record retention."
          >
            <input
              id={id}
              name="file_retention_days"
              class="input mono"
              inputMode="numeric"
              autoComplete="off"
              defaultValue={String(settings.file_retention_days)}
              {...describedBy(id, messages)}
            />
            <FieldProblems id={id} messages={messages} />
          </Field>
          <div class="form-actions">
            <button ref={saveButton} type="submit" class="button button-primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save file retention'}
            </button>
          </div>
        </div>
      </form>
    </section>
  );
}
