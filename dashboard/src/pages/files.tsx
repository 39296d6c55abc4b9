import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, apiBlob } from '../api.js';
import { navigate, withQuery } from '../router.js';
import { type DisbursementFile, FILE_TYPES } from '../types.js';
import {
  ErrorBox,
  Field,
  FilterForm,
  formatDate,
  formatMoney,
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
import { FILE_STATUS_LABELS, FILE_TYPE_LABELS } from './money-back.js';
import { saveBlob } from './runs-model.js';

/** The filters the page keeps in its address (`#/files?type=reversal&from=2026-11-01`), so a view can be shared. */
const FILTERS = ['type', 'payroll_id', 'from', 'to'] as const;
type Filter = (typeof FILTERS)[number];
const inputId = (name: Filter) => `files-${name.replace(/_/g, '-')}`;

/**
 * Every NACHA file the service wrote for the organization (`GET /v1/disbursement-files`), newest first: each run's,
 * and the re-debits and reversals written since, with their dates, totals and status, and a download of each file
 * (`text/plain`, saved as `<file_id>.ach`), which needs the `read:disbursements` scope.
 */
export function FilesPage({ query }: { query: URLSearchParams }) {
  const fileId = query.get('file_id');
  return fileId ? <OneFile fileId={fileId} /> : <FileList query={query} />;
}

/** `#/files?file_id=…`: one file (what an inbound acknowledgement links to), read by its id. */
function OneFile({ fileId }: { fileId: string }) {
  const file = useAsync(
    async () => (await api<DisbursementFile>('GET', `/v1/disbursement-files/${encodeURIComponent(fileId)}`)).data,
    [fileId],
  );
  return (
    <>
      <PageTitle subtitle="One NACHA file, by its id.">Files</PageTitle>
      <section aria-labelledby="file-one-title">
        <SectionHead titleId="file-one-title" title="File" onRefresh={file.reload} refreshing={file.loading} />
        <p class="small" data-testid="file-one">
          The file <code class="break">{fileId}</code>. <a href="#/files">Show every file</a>
        </p>
        <ErrorBox error={file.error} title="The file could not be loaded" />
        {file.loading && !file.data && <p aria-live="polite">Loading the file…</p>}
        {file.data && <Downloads files={[file.data]} />}
      </section>
    </>
  );
}

function FileList({ query }: { query: URLSearchParams }) {
  const filters = Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ''])) as Record<Filter, string>;
  const key = JSON.stringify(filters);
  const { first, items, next, loadMore, moreLoading, moreError } = usePagedList<DisbursementFile>(
    '/v1/disbursement-files',
    'files',
    filters,
    25,
  );
  // The fields show the address's filters: when it changes (a link, Back), they follow it.
  useEffect(() => {
    for (const k of FILTERS) {
      const el = document.getElementById(inputId(k)) as HTMLInputElement | HTMLSelectElement | null;
      if (el && el.value !== filters[k]) el.value = filters[k];
    }
  }, [key]);

  const apply = (form: HTMLFormElement) =>
    navigate(withQuery('/files', Object.fromEntries(FILTERS.map((k) => [k, formValue(form, k)]))));
  const filtered = FILTERS.some((k) => filters[k] !== '');

  return (
    <>
      <PageTitle subtitle="Every NACHA file written for your organization, newest first: each run’s, and the re-debits and reversals written since. Download a file to send it to the bank, or let the bank link (Settings) deliver it.">
        Files
      </PageTitle>

      <FilterForm titleId="file-filters-title" onApply={apply} onClear={() => navigate('/files')}>
        <Field id={inputId('type')} label="Type">
          <select id={inputId('type')} name="type" class="input">
            <option value="">Any type</option>
            {FILE_TYPES.map((t) => (
              <option key={t} value={t} selected={t === filters.type}>
                {FILE_TYPE_LABELS[t]}
              </option>
            ))}
          </select>
        </Field>
        <Field id={inputId('payroll_id')} label="Run" hint="A run’s id (pay_…): only its files.">
          <input
            id={inputId('payroll_id')}
            name="payroll_id"
            class="input mono"
            autoComplete="off"
            spellcheck={false}
            defaultValue={filters.payroll_id}
            aria-describedby={`${inputId('payroll_id')}-hint`}
          />
        </Field>
        <Field id={inputId('from')} label="Created from">
          <input id={inputId('from')} name="from" type="date" class="input" defaultValue={filters.from} />
        </Field>
        <Field id={inputId('to')} label="Created to">
          <input id={inputId('to')} name="to" type="date" class="input" defaultValue={filters.to} />
        </Field>
      </FilterForm>

      <section aria-labelledby="file-list-title">
        <SectionHead titleId="file-list-title" title="Files" onRefresh={first.reload} refreshing={first.loading} />
        {filters.payroll_id && (
          <p class="small" data-testid="files-of-run">
            The files of run{' '}
            <a href={`#/payrolls/${encodeURIComponent(filters.payroll_id)}`}>
              <code>{filters.payroll_id}</code>
            </a>
            . <a href={`#${withQuery('/files', { ...filters, payroll_id: '' })}`}>Show every run’s files</a>
          </p>
        )}
        <ErrorBox error={first.error} title="The files could not be loaded" />
        <ErrorBox error={moreError} title="More files could not be loaded" />
        {first.loading && !first.data && <p aria-live="polite">Loading files…</p>}
        {first.data &&
          !first.loading &&
          items.length === 0 &&
          (filtered ? (
            <p data-testid="files-empty">No file matches these filters.</p>
          ) : (
            <p data-testid="files-empty">
              No file yet: a run’s file is listed once the run is processed, and re-debits and reversals as they are
              written.
            </p>
          ))}
        <Downloads files={items} />
        <LoadMore next={next} loading={moreLoading} onClick={loadMore} label="Load older files" />
      </section>
    </>
  );
}

/** The list, with a download of each file; one download at a time, its outcome said above the list. */
function Downloads({ files }: { files: DisbursementFile[] }) {
  const [downloading, setDownloading] = useState<string | null>(null);
  const [failure, setFailure] = useState<{ fileId: string; error: unknown } | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const failureRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (failure) failureRef.current?.focus();
  }, [failure]);

  const download = async (f: DisbursementFile) => {
    setDownloading(f.file_id);
    setFailure(null);
    setSaved(null);
    try {
      const blob = await apiBlob(`/v1/disbursement-files/${encodeURIComponent(f.file_id)}`, 'text/plain');
      saveBlob(new Blob([blob], { type: 'text/plain' }), `${f.file_id}.ach`);
      setSaved(f.file_id);
    } catch (error) {
      setFailure({ fileId: f.file_id, error });
    } finally {
      setDownloading(null);
    }
  };

  return (
    <>
      {failure && <DownloadFailure fileId={failure.fileId} error={failure.error} refTo={failureRef} />}
      <p class={saved ? 'small' : 'sr-only'} role="status" data-testid="download-saved">
        {saved && (
          <>
            Saved as <code>{saved}.ach</code>. It holds full account numbers: keep it where only the people who send it
            to the bank can read it.
          </>
        )}
      </p>
      {files.length > 0 && (
        <TableRegion label="Files">
          <table class="table responsive" data-testid="files-table">
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Run</th>
                <th scope="col">Created</th>
                <th scope="col">Settles</th>
                <th scope="col" class="num">
                  Totals
                </th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {files.map((f) => (
                <tr key={f.file_id} data-file-id={f.file_id} data-type={f.type} data-status={f.status}>
                  <td data-label="File">
                    <strong>{FILE_TYPE_LABELS[f.type] ?? f.type}</strong>
                    {f.reason && <span class="small"> ({f.reason.replace(/_/g, ' ')})</span>}
                    <div class="small muted">
                      <code class="id truncate" title={f.file_id}>
                        {f.file_id}
                      </code>
                    </div>
                    <div class="small muted">file ID modifier {f.file_id_modifier}</div>
                  </td>
                  <td data-label="Run">
                    {f.payroll_id ? (
                      <a href={`#/payrolls/${encodeURIComponent(f.payroll_id)}`} title={f.payroll_id}>
                        <code class="id truncate">{f.payroll_id}</code>
                      </a>
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                  <td data-label="Created" class="nowrap">
                    <When iso={f.created_at} />
                  </td>
                  <td data-label="Settles" class="nowrap">
                    {formatDate(f.effective_entry_date)}
                    <div class="small muted" data-testid="release-by">
                      release by {formatDate(f.release_by)}
                    </div>
                  </td>
                  <td data-label="Totals" class="num small nowrap">
                    <div>
                      {f.entry_count} entr{f.entry_count === 1 ? 'y' : 'ies'}
                    </div>
                    <div>credit {formatMoney(f.total_credit)}</div>
                    <div>debit {formatMoney(f.total_debit)}</div>
                  </td>
                  <td data-label="Status" class="files-status">
                    <StatusBadge status={f.status} label={FILE_STATUS_LABELS[f.status] ?? f.status} />
                    {f.late_at && <StatusBadge status="late" label="late" />}
                    <Transmission file={f} />
                    {f.status === 'withdrawn' ? (
                      <div class="small muted">Must not reach a bank</div>
                    ) : (
                      <div>
                        <button
                          type="button"
                          class="button"
                          onClick={() => download(f)}
                          disabled={downloading !== null}
                          aria-label={`Download ${f.file_id}.ach`}
                        >
                          {downloading === f.file_id ? 'Downloading…' : 'Download'}
                        </button>
                      </div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      )}
    </>
  );
}

/**
 * Where the file is on its way to the bank (the bank link): when it was delivered and under which name, when the bank
 * acknowledged it, and when it was found late (not at the bank by its cut-off, or not acknowledged an hour after).
 */
function Transmission({ file: f }: { file: DisbursementFile }) {
  return (
    <div class="small" data-testid="transmission">
      {f.transmitted_at && (
        <div>
          sent <When iso={f.transmitted_at} />
          {f.remote_name && (
            <>
              {' '}
              as <code class="break">{f.remote_name}</code>
            </>
          )}
        </div>
      )}
      {f.acknowledged_at && (
        <div>
          acknowledged <When iso={f.acknowledged_at} />
        </div>
      )}
      {f.late_at && (
        <div class="warn-text">
          found late <When iso={f.late_at} />:{' '}
          {f.transmitted_at ? 'not acknowledged an hour after its cut-off' : 'not at the bank by its cut-off'}
        </div>
      )}
    </div>
  );
}

/**
 * A download refused: a token without `read:disbursements` (403) is told plainly that the file needs it, since it
 * holds full account numbers; a withdrawn file (410) that it must not reach a bank; anything else as the API said it.
 */
function DownloadFailure({
  fileId,
  error,
  refTo,
}: {
  fileId: string;
  error: unknown;
  refTo: { current: HTMLDivElement | null };
}) {
  const scope = error instanceof ApiError && error.status === 403;
  const withdrawn = error instanceof ApiError && error.status === 410;
  if (!scope && !withdrawn)
    return (
      <div tabIndex={-1} ref={refTo}>
        <ErrorBox error={error} title={`${fileId}.ach could not be downloaded`} />
      </div>
    );
  const e = error as ApiError;
  return (
    <div class="alert alert-error" role="alert" data-testid="download-refused" tabIndex={-1} ref={refTo}>
      <p class="alert-title">
        <strong>{fileId}.ach was not downloaded:</strong> {e.message}{' '}
        <span class="muted">
          ({e.status} {e.code})
        </span>
      </p>
      {scope ? (
        <p>
          This token may list files but not download them: a file holds employees’ full account numbers, so it needs the{' '}
          <code>read:disbursements</code> scope, which admin keys have. Sign in with an admin key to download it.
        </p>
      ) : (
        <p>The file is withdrawn: its run was cancelled or failed, and it must never reach a bank.</p>
      )}
      {e.requestId && (
        <p class="muted small">
          Request id: <code>{e.requestId}</code>
        </p>
      )}
    </div>
  );
}
