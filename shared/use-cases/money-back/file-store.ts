import { FileSealer, fileContext } from '../../adapters/file-sealer.js';
import { objectKeys } from '../../adapters/object-store.js';
import type { DisbursementFileRecord } from '../../data/disbursement-file-repository.js';
import type { PayrollRecord } from '../../data/payroll-repository.js';
import { DisbursementWithdrawnError, NotFoundError } from '../../domain/errors.js';
import { fileRetentionDays } from '../../domain/settings.js';
import type { MoneyBackServices } from './services.js';

const DAY_MS = 86_400_000;

/**
 * Seals a new file under a data key of its own and stores it beside its run's objects (locked for the retention
 * period in production). The object counts only once the transaction that lists the file commits: written before it,
 * an object whose transaction never commits is never listed, served or sent.
 */
export async function storeNewFile(
  s: Pick<MoneyBackServices, 'files' | 'objects' | 'organizations' | 'deps'>,
  run: Pick<PayrollRecord, 'organization_id' | 'payroll_id' | 'environment'>,
  fileId: string,
  content: string,
): Promise<{ object_key: string; file_key: string }> {
  const orgId = run.organization_id;
  const fresh = await s.files.newKey();
  const objectKey = objectKeys.runFile(orgId, run.payroll_id, fileId);
  const retainUntil =
    run.environment === 'production'
      ? new Date(s.deps.now().getTime() + fileRetentionDays((await s.organizations.getSettings(orgId)) ?? {}) * DAY_MS)
      : undefined;
  await s.objects.putText(objectKey, s.files.seal(content, fresh.key, fileContext(orgId, fileId)), 'text/plain', {
    retainUntil,
  });
  return { object_key: objectKey, file_key: fresh.wrapped };
}

/**
 * The text of a listed file, opened with its own key (a run's file with its run's). Only a file sealed under that
 * key is served: an object written there any other way fails to open. A withdrawn file is gone (410).
 */
export async function openListedFile(
  s: Pick<MoneyBackServices, 'files' | 'objects' | 'payrolls'>,
  file: DisbursementFileRecord,
): Promise<string> {
  const orgId = file.organization_id;
  if (file.status === 'withdrawn') throw new DisbursementWithdrawnError('cancelled');
  let wrapped = file.file_key;
  let context = fileContext(orgId, file.file_id);
  if (file.type === 'payroll') {
    const run = file.payroll_id ? await s.payrolls.get(orgId, file.payroll_id) : undefined;
    if (!run) throw new NotFoundError();
    if (run.status === 'cancelled' || run.status === 'failed') throw new DisbursementWithdrawnError(run.status);
    wrapped = run.file_key;
    context = fileContext(orgId, run.payroll_id);
  }
  const stored = await s.objects.getText(file.object_key);
  if (stored === undefined) throw new NotFoundError();
  if (!FileSealer.isSealed(stored) || !wrapped)
    throw new Error(`The stored file ${file.file_id} is not sealed under its own key`);
  return s.files.open(stored, wrapped, context);
}

/** The text of a run's own (payroll) file, to copy entries from: the same bytes the bank received. */
export async function runFileText(
  s: Pick<MoneyBackServices, 'files' | 'objects'>,
  run: PayrollRecord,
): Promise<string> {
  // Its key erased: the run was cancelled or failed, and its file is gone for good.
  if (!run.file_key) throw new DisbursementWithdrawnError(run.status === 'failed' ? 'failed' : 'cancelled');
  const stored = await s.objects.getText(objectKeys.disbursement(run.organization_id, run.payroll_id));
  if (stored === undefined || !FileSealer.isSealed(stored))
    throw new Error(`The file of run ${run.payroll_id} is missing or not sealed under the run's key`);
  return s.files.open(stored, run.file_key, fileContext(run.organization_id, run.payroll_id));
}
