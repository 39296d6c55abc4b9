import { useState } from 'preact/hooks';
import { listPage, type Query } from '../api.js';
import type { ApiKey, LogLine } from '../types.js';
import {
  ErrorBox,
  Field,
  FilterForm,
  formValue,
  HttpStatus,
  LoadMore,
  PageTitle,
  SectionHead,
  TableRegion,
  useAsync,
  usePagedList,
  When,
} from '../ui.js';

/** The audit log (GET /v1/logs): every authenticated request and authentication failure, newest first. */
export function LogsPage() {
  const [filters, setFilters] = useState<Query>({});
  const keys = useAsync(() => listPage<ApiKey>('/v1/api-keys', 'api_keys', { limit: 100 }), []);
  const {
    first,
    items: lines,
    next,
    loadMore,
    moreLoading,
    moreError,
  } = usePagedList<LogLine>('/v1/logs', 'logs', filters, 50);
  const keyName = new Map((keys.data?.items ?? []).map((k) => [k.api_key_id, k.name]));

  const apply = (form: HTMLFormElement) => {
    setFilters({
      api_key_id: formValue(form, 'api_key_id'),
      status: formValue(form, 'status'),
      path_prefix: formValue(form, 'path_prefix'),
      from: formValue(form, 'from'),
      to: formValue(form, 'to'),
    });
  };

  return (
    <>
      <PageTitle subtitle="Every authenticated request and every authentication failure, newest first. Lines appear within a second and are kept 400 days.">
        Logs
      </PageTitle>

      <FilterForm titleId="log-filters-title" onApply={apply} onClear={() => setFilters({})}>
        <Field id="log-key" label="API key">
          <select id="log-key" name="api_key_id" class="input">
            <option value="">Any key</option>
            {(keys.data?.items ?? []).map((k) => (
              <option key={k.api_key_id} value={k.api_key_id}>
                {k.name} ({k.api_key_id})
              </option>
            ))}
          </select>
        </Field>
        <Field id="log-status" label="Status code" hint="e.g. 401">
          <input
            id="log-status"
            name="status"
            class="input"
            inputMode="numeric"
            pattern="[1-5][0-9]{2}"
            maxLength={3}
            aria-describedby="log-status-hint"
          />
        </Field>
        <Field id="log-path" label="Path starts with" hint="e.g. /v1/payroll">
          <input id="log-path" name="path_prefix" class="input" aria-describedby="log-path-hint" />
        </Field>
        <Field id="log-from" label="From (UTC day)">
          <input id="log-from" name="from" type="date" class="input" />
        </Field>
        <Field id="log-to" label="To (UTC day)">
          <input id="log-to" name="to" type="date" class="input" />
        </Field>
      </FilterForm>

      <section aria-labelledby="log-lines-title">
        <SectionHead titleId="log-lines-title" title="Requests" onRefresh={first.reload} refreshing={first.loading} />
        <ErrorBox error={first.error} title="The log could not be read" />
        <ErrorBox error={moreError} />
        <p class="sr-only" aria-live="polite">
          {first.loading ? 'Loading log lines…' : `${lines.length} log lines shown`}
        </p>
        {first.data && lines.length === 0 && <p>No request matches these filters.</p>}
        {lines.length > 0 && (
          <TableRegion label="Audit log lines">
            <table class="table responsive" data-testid="log-table">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Request</th>
                  <th scope="col">Status</th>
                  <th scope="col">Latency</th>
                  <th scope="col">Key</th>
                  <th scope="col">Source</th>
                </tr>
              </thead>
              <tbody>
                {lines.map((l) => (
                  <tr key={l.request_id}>
                    <td data-label="Time" class="nowrap">
                      <When iso={l.at} />
                    </td>
                    <td data-label="Request">
                      <code>
                        <span class="method">{l.method}</span> {l.path}
                      </code>
                      {l.auth_failure && <div class="small warn-text">Refused: {l.auth_failure}</div>}
                      <div class="small muted">id {l.request_id}</div>
                    </td>
                    <td data-label="Status">
                      <HttpStatus status={l.status} />
                    </td>
                    <td data-label="Latency" class="num">
                      {l.latency_ms} ms
                    </td>
                    <td data-label="Key">
                      {l.api_key_id ? (
                        <>
                          {keyName.get(l.api_key_id) ?? ''}
                          <div>
                            <code class="small muted id truncate" title={l.api_key_id}>
                              {l.api_key_id}
                            </code>
                          </div>
                        </>
                      ) : (
                        '—'
                      )}
                    </td>
                    <td data-label="Source" class="small">
                      {l.source_ip ?? '—'}
                      <div class="muted ua" title={l.user_agent ?? undefined}>
                        {l.user_agent ?? ''}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
        <LoadMore next={next} loading={moreLoading} onClick={loadMore} label="Load older lines" />
      </section>
    </>
  );
}
