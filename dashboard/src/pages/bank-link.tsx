import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { withQuery } from '../router.js';
import type {
  BankConnectionTest,
  BankDirectoryListing,
  BankLink,
  BankLinkStatus,
  BankLinkUpdate,
  InboundFile,
  InboundFileKind,
  InboundItemOutcome,
  Settings,
  SettingsUpdate,
} from '../types.js';
import {
  type Async,
  ErrorBox,
  Field,
  fieldProblems,
  formValue,
  LoadMore,
  PageTitle,
  SectionHead,
  StatusBadge,
  TableRegion,
  useAsync,
  usePagedList,
  When,
} from '../ui.js';

/**
 * The bank link in the console: the bank's SFTP server files are delivered to (`settings.bank_link`, its password or
 * private key write-only), whether its last pass reached the bank (`GET /v1/bank-link`), and what it picked up from
 * the bank (`GET /v1/bank-link/inbound-files`). Admin keys only, as the API is.
 */

type Save = (body: SettingsUpdate, message: string) => Promise<void>;
type LinkField = Exclude<keyof BankLink, 'credential'>;
type Credential = BankLink['credential'];

/** Each field of the link, with the rule the API checks it by (shared/schemas/settings.ts) said in words. */
const LINK_FIELDS: {
  name: LinkField;
  label: string;
  hint: string;
  maxLength: number;
  numeric?: true;
  placeholder?: string;
}[] = [
  {
    name: 'host',
    label: 'Host',
    maxLength: 253,
    hint: 'The bank’s SFTP server: a host name or an IPv4 address (letters, digits, dots and hyphens).',
    placeholder: 'sftp.bank.example',
  },
  {
    name: 'port',
    label: 'Port',
    maxLength: 5,
    numeric: true,
    hint: '1 to 65535. Left empty: 22, the SFTP port.',
  },
  {
    name: 'username',
    label: 'User name',
    maxLength: 64,
    hint: 'As your bank gave it: letters, digits, “.”, “_” and “-”, up to 64.',
  },
  {
    name: 'remote_inbound_dir',
    label: 'Upload directory',
    maxLength: 201,
    hint: 'The bank’s inbound directory, where each file is delivered. An absolute path: “/”, then letters, digits, “.”, “_”, “-” and “/”; no “.” or “..” part.',
    placeholder: '/inbound',
  },
  {
    name: 'remote_outbound_dir',
    label: 'Pick-up directory',
    maxLength: 201,
    hint: 'The bank’s outbound directory, where it leaves acknowledgements, returns and notifications of change. An absolute path, as above.',
    placeholder: '/outbound',
  },
  {
    name: 'host_key_fingerprint',
    label: 'Host key fingerprint',
    maxLength: 50,
    hint: 'As “ssh-keygen -lf” prints it: “SHA256:” then 43 characters. Get it from your bank over a channel you trust: a server showing any other key is refused, and nothing is sent to it.',
    placeholder: 'SHA256:…',
  },
  {
    name: 'cutoff_time',
    label: 'Cut-off time',
    maxLength: 5,
    numeric: true,
    hint: 'HH:MM, 24-hour, New York time: each file must be at the bank by then on its release-by day, or it is reported late.',
    placeholder: '14:00',
  },
];

const CREDENTIALS: { value: Credential; label: string }[] = [
  { value: 'password', label: 'A password' },
  { value: 'private_key', label: 'A private key' },
];
const credentialWords = (c: Credential) => (c === 'password' ? 'password' : 'private key');

const inputId = (name: string) => `bank-link-${name.replace(/_/g, '-')}`;

/** A size in bytes, as a listing or a picked-up file shows it. */
const bytes = (n: number) => (n === 1 ? '1 byte' : `${n.toLocaleString('en-US')} bytes`);

/** The link's status, read on its own: a page goes on when it cannot be read, and says so. */
export function useBankLinkStatus(): Async<BankLinkStatus> {
  return useAsync(async () => (await api<BankLinkStatus>('GET', '/v1/bank-link')).data, []);
}

/** Why the last pass failed, in plain words, by the reason's code (`host_key_mismatch: …`). */
const FAILURES: Record<string, string> = {
  host_key_mismatch:
    'The server showed a host key other than the pinned fingerprint, so the service did not sign in and nothing was sent. If your bank changed its key, confirm the new fingerprint with the bank and save it here; if not, someone may be impersonating its server.',
  connection_failed:
    'The service could not connect or sign in to the bank’s server: check the host, port, user name and password or key, and that the server lets the service in.',
  transfer_failed:
    'The service signed in, but a transfer failed part-way. The next pass tries again; a file already delivered is not sent twice.',
};

export function failureInWords(reason: string | null): string {
  const code = reason?.split(':')[0]?.trim() ?? '';
  return FAILURES[code] ?? 'The last pass failed.';
}

/** Whether files reach the bank: not set, set but not yet checked, working, or failing and why. */
export function BankLinkStatusView({ status }: { status: Async<BankLinkStatus> }) {
  const s = status.data;
  return (
    <div data-testid="bank-link-status" aria-live="polite">
      <ErrorBox error={status.error} title="The bank link’s status could not be read" />
      {status.loading && !s && <p class="muted">Reading the bank link’s status…</p>}
      {s && !s.configured && (
        <p>
          <StatusBadge status="not_set" label="not set" /> No bank link: the service sends nothing to the bank and picks
          nothing up. Files are sent to the bank by hand.
        </p>
      )}
      {s?.configured && s.state === null && (
        <p>
          <StatusBadge status="not_checked" label="configured, not yet checked" /> The link is set, but its first pass
          has not run yet: nothing has been sent or picked up.
        </p>
      )}
      {s?.configured && s.state === 'ok' && (
        <p>
          <StatusBadge status="ok" label="working" /> The last pass reached the bank: ready files were delivered, and
          what the bank left was picked up. Checked <When iso={s.checked_at} />.
        </p>
      )}
      {s?.configured && s.state === 'failing' && (
        <>
          <p>
            <StatusBadge status="failing" label="failing" /> {failureInWords(s.reason)} Checked{' '}
            <When iso={s.checked_at} />.
          </p>
          {s.reason && (
            <p class="small">
              The service said: <code class="break">{s.reason}</code>
            </p>
          )}
        </>
      )}
    </div>
  );
}

/** The link as stored: where files go and come from, and which secret is kept (never the secret itself). */
function CurrentLink({ link }: { link: BankLink }) {
  return (
    <dl class="facts" data-testid="bank-link-current">
      <div>
        <dt>Server</dt>
        <dd class="mono break">
          {link.host}:{link.port}
        </dd>
      </div>
      <div>
        <dt>User name</dt>
        <dd class="mono break">{link.username}</dd>
      </div>
      <div>
        <dt>Upload directory</dt>
        <dd class="mono break">{link.remote_inbound_dir}</dd>
      </div>
      <div>
        <dt>Pick-up directory</dt>
        <dd class="mono break">{link.remote_outbound_dir}</dd>
      </div>
      <div>
        <dt>Host key</dt>
        <dd class="mono break">{link.host_key_fingerprint}</dd>
      </div>
      <div>
        <dt>Cut-off</dt>
        <dd>{link.cutoff_time} New York time</dd>
      </div>
      <div>
        <dt>Signs in with</dt>
        <dd>A {credentialWords(link.credential)}, kept encrypted and never shown</dd>
      </div>
    </dl>
  );
}

/** Why a connection test failed, in an operator's words, by its reason. */
const TEST_FAILURES: Record<Extract<BankConnectionTest, { ok: false }>['reason'], { label: string; says: string }> = {
  host_key_mismatch: {
    label: 'host key mismatch',
    says: 'The server showed a host key other than the pinned fingerprint, so the service did not sign in and nothing was sent. If your bank changed its key, confirm the new fingerprint with the bank over a channel you trust and save it here; if not, someone may be impersonating its server.',
  },
  host_refused: {
    label: 'host not allowed',
    says: 'The service may not connect to this host, so nothing was sent. In production the bank’s server must have a public address.',
  },
  connection_failed: {
    label: 'could not connect',
    says: 'The service could not connect or sign in to the bank’s server: check the host, port, user name and password or key, and that the server lets the service in.',
  },
  listing_failed: {
    label: 'directory not listed',
    says: 'The service signed in, but could not list a directory: check the upload and pick-up directories with your bank.',
  },
};

/** One remote directory as the test listed it: its files by name and size. */
function Listing({ title, listing, testId }: { title: string; listing: BankDirectoryListing; testId: string }) {
  return (
    <div data-testid={testId} class="bank-link-listing">
      <h4>
        {title} <code class="break">{listing.dir}</code>
      </h4>
      {listing.files.length === 0 ? (
        <p class="small muted">Empty: no files.</p>
      ) : (
        <TableRegion label={`${title} ${listing.dir}`}>
          <table class="table responsive">
            <caption class="sr-only">
              Files in {listing.dir}, by name{listing.truncated ? `: the first ${listing.files.length}` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Size</th>
              </tr>
            </thead>
            <tbody>
              {listing.files.map((f) => (
                <tr key={f.name} data-name={f.name}>
                  <td data-label="File">
                    <code class="break">{f.name}</code>
                  </td>
                  <td data-label="Size" class="nowrap">
                    {bytes(f.size)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
      {listing.truncated && (
        <p class="small muted">
          Only the first {listing.files.length} files by name are shown: the directory holds more.
        </p>
      )}
    </div>
  );
}

/** What the connection test found: both listings, or why the server could not be reached or listed. */
function ConnectionTestResult({ result, link }: { result: BankConnectionTest; link: BankLink }) {
  if (result.ok) {
    const count = (l: BankDirectoryListing) =>
      `${l.files.length}${l.truncated ? '+' : ''} ${l.files.length === 1 && !l.truncated ? 'file' : 'files'}`;
    return (
      <>
        <p>
          <StatusBadge status="ok" label="connected" /> Signed in to{' '}
          <span class="mono break">
            {link.host}:{link.port}
          </span>{' '}
          and listed both directories: {count(result.inbound)} in the upload directory, {count(result.outbound)} in the
          pick-up directory. Nothing was sent or picked up. Tested <When iso={result.checked_at} />.
        </p>
        <Listing title="Upload directory" listing={result.inbound} testId="bank-link-test-inbound" />
        <Listing title="Pick-up directory" listing={result.outbound} testId="bank-link-test-outbound" />
      </>
    );
  }
  const failure = TEST_FAILURES[result.reason];
  return (
    <>
      <p>
        <StatusBadge status="failing" label={failure?.label ?? result.reason} />{' '}
        {failure?.says ?? 'The connection test failed.'} Tested <When iso={result.checked_at} />.
      </p>
      {result.reason === 'host_key_mismatch' && (
        <dl class="facts" data-testid="bank-link-test-fingerprints">
          <div>
            <dt>Pinned in the link</dt>
            <dd class="mono break">{link.host_key_fingerprint}</dd>
          </div>
          <div>
            <dt>Shown by the server</dt>
            <dd class="mono break">{result.presented_fingerprint ?? 'not known'}</dd>
          </div>
        </dl>
      )}
      <p class="small">
        The connection said: <code class="break">{result.message}</code>
      </p>
    </>
  );
}

/**
 * Test connection: one session with the bank's server under the saved link, listing its upload and pick-up
 * directories (nothing sent or picked up). Its outcome is announced politely; the listings follow it.
 */
function ConnectionTest({ link }: { link: BankLink }) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<BankConnectionTest | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult((await api<BankConnectionTest>('POST', '/v1/bank-link/test')).data);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="bank-link-test">
      <div class="section-head">
        <h3 class="h3" id="bank-link-test-title">
          Connection test
        </h3>
        <button type="button" class="button" onClick={run} disabled={busy} aria-describedby="bank-link-test-hint">
          {busy ? 'Testing…' : 'Test connection'}
        </button>
      </div>
      <p class="small muted" id="bank-link-test-hint">
        Signs in to the bank’s server with the saved link and lists its upload and pick-up directories. Nothing is sent
        or picked up, and the status above stays that of the last pass.
      </p>
      <div data-testid="bank-link-test-result" aria-live="polite" aria-busy={busy ? 'true' : 'false'}>
        {busy && <p class="muted">Connecting to the bank’s server: this can take up to 20 seconds…</p>}
        <ErrorBox error={error} title="The connection test could not run" />
        {result && <ConnectionTestResult result={result} link={link} />}
      </div>
    </div>
  );
}

/**
 * Settings → Bank link: the link and its status, a form setting or replacing it (the password or key given again each
 * time: the API never answers it), and removing it. The fields are sent as typed; the API's problems show next to
 * each field.
 */
export function BankLinkCard({ settings, onSaved }: { settings: Settings; onSaved: Save }) {
  const link = settings.bank_link;
  const status = useBankLinkStatus();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<'save' | 'remove' | null>(null);
  const [credential, setCredential] = useState<Credential>(link?.credential ?? 'password');
  // Counts this form's saves: it starts again from what the API stored, the secret gone from the page.
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
    const body: Record<string, unknown> = {};
    for (const f of LINK_FIELDS) {
      const value = formValue(form, f.name);
      if (f.name !== 'port') body[f.name] = value;
      // A whole number is sent as one; anything else as typed, for the API to say what a port must be.
      else if (value !== '') body.port = /^\d+$/.test(value) ? Number(value) : value;
    }
    // The secret as typed: a password may hold spaces; a key's surrounding blank lines are dropped.
    const secretInput = form.elements.namedItem(credential) as HTMLInputElement | HTMLTextAreaElement | null;
    const raw = secretInput?.value ?? '';
    const secret = credential === 'password' ? raw : raw.trim() && `${raw.trim()}\n`;
    if (secret !== '') body[credential] = secret;
    setBusy('save');
    try {
      await onSaved(
        { bank_link: body as BankLinkUpdate },
        `Bank link saved: ${String(body.host)}:${String(body.port ?? 22)}, signing in as ${String(body.username)} with a ${credentialWords(credential)}, kept encrypted and never shown again.`,
      );
      setSaves((n) => n + 1);
      status.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  const remove = async () => {
    if (
      !confirm(
        'Remove the bank link? The service stops delivering files to the bank and picking up what it sends back: each file is then sent by hand. The stored password or key is deleted.',
      )
    )
      return;
    setError(null);
    setBusy('remove');
    try {
      await onSaved({ bank_link: null }, 'Bank link removed: files are sent to the bank by hand.');
      setSaves((n) => n + 1);
      status.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  // The API names a missing secret on `password` whichever was chosen: the secret's field shows both.
  const secretId = inputId(credential);
  const secretProblems =
    error instanceof ApiError
      ? error.details
          .filter((d) => d.field === 'bank_link.password' || d.field === 'bank_link.private_key')
          .map((d) => d.message)
      : [];
  const secretDescribedBy = [`${secretId}-hint`, secretProblems.length > 0 && `${secretId}-error`]
    .filter(Boolean)
    .join(' ');

  return (
    <section class="card" aria-labelledby="bank-link-title" data-testid="bank-link-card">
      <h2 id="bank-link-title">Bank link</h2>
      <p class="small muted">
        With a bank link, the service delivers each ready file to your bank’s SFTP server before its cut-off, and picks
        up the bank’s acknowledgements and return files (see <a href="#/bank-files">what it picked up</a>). Without one,
        you download each file from <a href="#/files">Files</a> and send it to the bank yourself.
      </p>
      <ErrorBox error={error} title="The bank link was not changed" />
      <div class="funding-current">
        {link ? (
          <p>
            <strong>
              Files go to <span class="mono break">{link.host}</span>
            </strong>
          </p>
        ) : (
          <p data-testid="bank-link-none">Not set: files are sent to the bank by hand.</p>
        )}
        {link && (
          <button type="button" class="button button-danger" onClick={remove} disabled={busy !== null}>
            {busy === 'remove' ? 'Removing…' : 'Remove link'}
          </button>
        )}
      </div>
      {link && <CurrentLink link={link} />}

      <div class="section-head">
        <h3 class="h3" id="bank-link-status-title">
          Status
        </h3>
        <button type="button" class="button" onClick={status.reload} disabled={status.loading}>
          Refresh status
        </button>
      </div>
      <BankLinkStatusView status={status} />
      {link && <ConnectionTest key={saves} link={link} />}

      <form key={saves} onSubmit={save} noValidate aria-labelledby="bank-link-form-title">
        <h3 id="bank-link-form-title" class="h3">
          {link ? 'Change the bank link' : 'Set up the bank link'}
        </h3>
        <p class="small muted">
          Saving replaces the whole link, so its password or private key is given again each time.
        </p>
        <div class="form-grid">
          {LINK_FIELDS.map((f) => {
            const id = inputId(f.name);
            const field = `bank_link.${f.name}`;
            const stored = link ? String(link[f.name]) : f.name === 'port' ? '22' : '';
            return (
              <Field key={f.name} id={id} label={f.label} hint={f.hint}>
                <input
                  id={id}
                  name={f.name}
                  class="input mono"
                  maxLength={f.maxLength}
                  autoComplete="off"
                  spellcheck={false}
                  inputMode={f.numeric ? 'numeric' : undefined}
                  placeholder={f.placeholder}
                  defaultValue={stored}
                  {...invalid(field, id, true)}
                />
                {problem(field, id)}
              </Field>
            );
          })}
          <fieldset class="fieldset bank-link-credential">
            <legend>Signs in with</legend>
            {CREDENTIALS.map((c) => (
              <label class="check" key={c.value}>
                <input
                  type="radio"
                  name="credential"
                  value={c.value}
                  checked={credential === c.value}
                  onChange={() => setCredential(c.value)}
                />{' '}
                {c.label}
              </label>
            ))}
          </fieldset>
          {credential === 'password' ? (
            <Field
              id={secretId}
              label="Password"
              hint="Write-only: kept encrypted, never shown again (here or by the API). Type it each time you save the link."
            >
              <input
                id={secretId}
                name="password"
                type="password"
                class="input mono"
                maxLength={256}
                autoComplete="new-password"
                spellcheck={false}
                aria-invalid={secretProblems.length > 0 ? 'true' : undefined}
                aria-describedby={secretDescribedBy}
              />
              {secretProblems.length > 0 && (
                <p class="field-error" id={`${secretId}-error`}>
                  {secretProblems.join(' ')}
                </p>
              )}
            </Field>
          ) : (
            <Field
              id={secretId}
              label="Private key"
              hint="PEM or OpenSSH form, from its “-----BEGIN … PRIVATE KEY-----” line to its END line, without a passphrase. Write-only: kept encrypted, never shown again. Paste it each time you save the link."
            >
              <textarea
                id={secretId}
                name="private_key"
                class="input mono"
                rows={6}
                autoComplete="off"
                spellcheck={false}
                aria-invalid={secretProblems.length > 0 ? 'true' : undefined}
                aria-describedby={secretDescribedBy}
              />
              {secretProblems.length > 0 && (
                <p class="field-error" id={`${secretId}-error`}>
                  {secretProblems.join(' ')}
                </p>
              )}
            </Field>
          )}
          <div class="form-actions">
            <button ref={saveButton} type="submit" class="button button-primary" disabled={busy !== null}>
              {busy === 'save' ? 'Saving…' : 'Save bank link'}
            </button>
          </div>
        </div>
      </form>
    </section>
  );
}

// ---- Inbound bank files ---------------------------------------------------------------------------------------------

const KIND_LABELS: Record<InboundFileKind, string> = {
  acknowledgement: 'Acknowledgement',
  returns: 'Returns',
  unreadable: 'Unreadable',
};

/** What became of a file picked up, in plain words (an unreadable file's outcome is why, as the API says it). */
const OUTCOMES: Record<string, { label: string; says: string }> = {
  acknowledged: { label: 'acknowledged', says: 'The bank received the file as it was sent.' },
  rejected_by_bank: { label: 'rejected by the bank', says: 'The bank’s acknowledgement says it rejected the file.' },
  hash_mismatch: {
    label: 'not the bytes sent',
    says: 'It names a file sent, but not the bytes sent: the file is not marked acknowledged.',
  },
  unknown_file: { label: 'not a file sent', says: 'It names no file the service sent.' },
  applied: { label: 'applied', says: 'Applied as a returns upload is: nothing is applied twice.' },
};

const ITEM_LABELS: Record<InboundItemOutcome, string> = {
  applied: 'applied',
  already_applied: 'already applied',
  unknown_trace: 'no matching payment',
  amount_mismatch: 'amount differs',
};

function Outcome({ file }: { file: InboundFile }) {
  const known = OUTCOMES[file.outcome];
  const items = (Object.keys(ITEM_LABELS) as InboundItemOutcome[]).filter((k) => file.items[k] !== undefined);
  return (
    <>
      {known ? (
        <StatusBadge status={file.outcome} label={known.label} />
      ) : (
        <StatusBadge status={file.kind === 'unreadable' ? 'unreadable' : file.outcome} label={file.outcome} />
      )}
      {known ? (
        <div class="small muted">{known.says}</div>
      ) : (
        file.kind === 'unreadable' && <div class="small muted">Neither an acknowledgement nor a returns file.</div>
      )}
      {items.length > 0 && (
        <div class="small" data-testid="inbound-items">
          {items.map((k) => `${file.items[k]} ${ITEM_LABELS[k]}`).join(', ')}
        </div>
      )}
    </>
  );
}

/**
 * `#/bank-files`: every file the bank link picked up from the bank's pick-up directory, each once, with what became
 * of it; an acknowledgement links to the file it is about.
 */
export function InboundFilesPage() {
  const status = useBankLinkStatus();
  const { first, items, next, loadMore, moreLoading, moreError } = usePagedList<InboundFile>(
    '/v1/bank-link/inbound-files',
    'inbound_files',
    {},
    25,
  );
  const configured = status.data?.configured;
  return (
    <>
      <PageTitle subtitle="What the bank link picked up from your bank’s pick-up directory, each file once: acknowledgements of the files it delivered, and return and notification-of-change files, applied as a returns upload is.">
        Inbound bank files
      </PageTitle>

      <section class="card" aria-labelledby="inbound-link-title">
        <h2 id="inbound-link-title" class="h3">
          Bank link
        </h2>
        <BankLinkStatusView status={status} />
        <p class="small">
          {configured === false ? (
            <a href="#/settings">Set up a bank link in Settings</a>
          ) : (
            <a href="#/settings">See or change the bank link in Settings</a>
          )}
        </p>
      </section>

      <section aria-labelledby="inbound-list-title">
        <SectionHead
          titleId="inbound-list-title"
          title="Picked up"
          onRefresh={() => {
            first.reload();
            status.reload();
          }}
          refreshing={first.loading}
        />
        <ErrorBox error={first.error} title="The inbound files could not be loaded" />
        <ErrorBox error={moreError} title="More inbound files could not be loaded" />
        {first.loading && !first.data && <p aria-live="polite">Loading inbound files…</p>}
        {first.data && !first.loading && items.length === 0 && (
          <p data-testid="inbound-empty">
            {configured === false
              ? 'Nothing picked up: there is no bank link, so files are sent to the bank by hand and what it sends back is uploaded by hand.'
              : 'Nothing picked up yet: acknowledgements and return files show here once the bank link fetches them from the bank.'}
          </p>
        )}
        {items.length > 0 && (
          <TableRegion label="Inbound bank files">
            <table class="table responsive" data-testid="inbound-table">
              <caption class="sr-only">Files picked up from the bank, by name, last first</caption>
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">File</th>
                  <th scope="col">Picked up</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Sent file</th>
                </tr>
              </thead>
              <tbody>
                {items.map((f) => (
                  <tr key={`${f.name}#${f.sha256}`} data-name={f.name} data-kind={f.kind}>
                    <td data-label="Kind">{KIND_LABELS[f.kind] ?? f.kind}</td>
                    <td data-label="File">
                      <code class="break">{f.name}</code>
                      <div class="small muted">
                        {bytes(f.size)} · SHA-256{' '}
                        <code class="id truncate" title={f.sha256}>
                          {f.sha256.slice(0, 12)}…
                        </code>
                      </div>
                    </td>
                    <td data-label="Picked up" class="nowrap">
                      <When iso={f.picked_up_at} />
                    </td>
                    <td data-label="Outcome">
                      <Outcome file={f} />
                    </td>
                    <td data-label="Sent file">
                      {f.file_id ? (
                        <a href={`#${withQuery('/files', { file_id: f.file_id })}`} title={f.file_id}>
                          <code class="id truncate">{f.file_id}</code>
                        </a>
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
        <LoadMore next={next} loading={moreLoading} onClick={loadMore} label="Load more inbound files" />
      </section>
    </>
  );
}
