import { BANK_TIME_ZONE, dateInTimeZone, earliestPayDate, effectiveEntryDate, releaseBy } from './banking-calendar.js';

/** The trace number's sequence part is 7 digits. */
export const MAX_TRACE_SEQUENCE = 9_999_999;

/**
 * Where the trace sequence of an organization created before sequences existed starts: its earlier files numbered
 * each run's entries from 1, and a run has at most 25,000 entries, so every later number is clear of them all.
 */
export const LEGACY_TRACE_FLOOR = 25_000;

/**
 * The numbering a planned run's file uses. A run planned before blocks were reserved (in flight across the deploy
 * that introduced them) has neither: it keeps the numbering it started with, 1 up, and modifier `A`, so its chunks,
 * its file and its answers still agree.
 */
export function fileNumbering(run: { trace_start: number | null; file_id_modifier: string | null }): {
  traceStart: number;
  fileIdModifier: string;
} {
  return { traceStart: run.trace_start ?? 1, fileIdModifier: run.file_id_modifier ?? 'A' };
}

/** The entry detail amount field is 10 digits of cents ($99,999,999.99). */
export const MAX_ENTRY_CENTS = 9_999_999_999;
/** Batch and file control totals are 12 digits of cents ($9,999,999,999.99). */
export const MAX_TOTAL_CENTS = 999_999_999_999;

/**
 * The offset debits a balanced batch needs for its credits: one, unless the total is more than one entry's amount
 * field carries; then as many full entries as it takes and the remainder.
 */
export function offsetEntryCount(creditCents: number): number {
  return Math.max(1, Math.ceil(creditCents / MAX_ENTRY_CENTS));
}

/** A file ID modifier: the n-th file of a day to one destination carries the n-th symbol, A–Z then 0–9. */
const FILE_ID_MODIFIERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Past the 36th file of a day the symbols start again: a bank takes at most 36 files a day from one origin. */
export function fileIdModifierFor(index: number): string {
  return FILE_ID_MODIFIERS[index % FILE_ID_MODIFIERS.length]!;
}

/** The dates a payroll's file runs on: settled on `effective_entry_date`, due at the bank by `release_by`. */
export function disbursementDates(payDate: string): { effective_entry_date: string; release_by: string } {
  return { effective_entry_date: effectiveEntryDate(payDate), release_by: releaseBy(payDate) };
}

/** Today, as the ACH operators' calendar sees it. */
export function bankToday(now: Date): string {
  return dateInTimeZone(now, BANK_TIME_ZONE).date;
}

/**
 * In production the file must reach the bank by `release_by`: a pay date whose release day is already past would
 * settle late. Answers the earliest pay date still possible, or undefined when the pay date is fine.
 */
export function tooSoon(payDate: string, now: Date): { earliest_pay_date: string; release_by: string } | undefined {
  const today = bankToday(now);
  const due = releaseBy(payDate);
  return due < today ? { earliest_pay_date: earliestPayDate(today), release_by: due } : undefined;
}
