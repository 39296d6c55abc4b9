import type { DisbursementFileRecord } from '../data/disbursement-file-repository.js';
import { centsToNumber } from '../domain/money.js';

/** A file as the API lists it: what it is, when it settles, its control totals and where it stands. */
export function disbursementFileView(f: DisbursementFileRecord) {
  return {
    file_id: f.file_id,
    type: f.type,
    payroll_id: f.payroll_id,
    status: f.status,
    created_at: f.created_at,
    effective_entry_date: f.effective_entry_date,
    release_by: f.release_by,
    file_id_modifier: f.file_id_modifier,
    entry_count: f.entry_count,
    entry_hash: f.entry_hash,
    total_credit: centsToNumber(f.total_credit),
    total_debit: centsToNumber(f.total_debit),
    batch_count: f.batch_count,
    block_count: f.block_count,
    transmitted_at: f.transmitted_at,
    remote_name: f.remote_name,
    acknowledged_at: f.acknowledged_at,
    late_at: f.late_at,
    reason: f.reason,
  };
}
export type DisbursementFileView = ReturnType<typeof disbursementFileView>;
