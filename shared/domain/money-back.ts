import { isBankingDay, nextBankingDay, previousBankingDay } from './banking-calendar.js';

/**
 * Money coming back (CONTRACT §12): the funding debit of a balanced run, its re-debits, and reversals of payments.
 * Pure rules: what may happen to a run's funding, when a re-debit or a reversal is still allowed, and what each is
 * called. The use cases in shared/use-cases/money-back/ carry them out.
 */

/** The files the service writes, by what they are for. */
export const FILE_TYPES = ['payroll', 'redebit', 'reversal', 'prenote'] as const;
export type DisbursementFileType = (typeof FILE_TYPES)[number];

/** A file is `ready` once written; `withdrawn` when its run was cancelled or failed (it must not reach a bank). */
export const FILE_STATUSES = ['ready', 'withdrawn', 'transmitted', 'acknowledged'] as const;
export type DisbursementFileStatus = (typeof FILE_STATUSES)[number];

/**
 * The funding debit's lifecycle, declared once as the run's is: `scheduled` with the run's file; `returned` when the
 * bank sends it back (the organization is on hold); then either re-debited (`redebit_scheduled`, whose return puts it
 * back to `returned`) or paid by other means (`resolved`).
 */
export const FUNDING_STATUSES = ['scheduled', 'returned', 'redebit_scheduled', 'resolved'] as const;
export type FundingStatus = (typeof FUNDING_STATUSES)[number];

export const FUNDING_TRANSITIONS = {
  /** The bank returned the debit (the original, or a re-debit). */
  return: { from: ['scheduled', 'redebit_scheduled'], to: 'returned' },
  redebit: { from: ['returned'], to: 'redebit_scheduled' },
  resolve: { from: ['returned'], to: 'resolved' },
} as const satisfies Record<string, { from: readonly FundingStatus[]; to: FundingStatus }>;
export type FundingEvent = keyof typeof FUNDING_TRANSITIONS;

export function fundingMay(status: FundingStatus, event: FundingEvent): boolean {
  return (FUNDING_TRANSITIONS[event].from as readonly FundingStatus[]).includes(status);
}

/** NACHA lets an originator re-initiate a debit returned for insufficient or uncollected funds only. */
export const REDEBITABLE_CODES: readonly string[] = ['R01', 'R09'];
/** At most two re-initiations of one entry, within 180 days of the original's settlement date. */
export const MAX_REDEBITS = 2;
export const REDEBIT_WINDOW_DAYS = 180;
/** NACHA: a re-initiated entry carries this Company Entry Description. */
export const REDEBIT_DESCRIPTION = 'RETRY PYMT';
export const REVERSAL_DESCRIPTION = 'REVERSAL';

export type RedebitRefusal = 'not_returned' | 'return_code' | 'limit_reached' | 'window_closed';

export const REDEBIT_REFUSAL_MESSAGE: Record<RedebitRefusal, string> = {
  not_returned: 'Only a returned funding debit can be re-debited',
  return_code: 'Only a debit returned R01 (insufficient funds) or R09 (uncollected funds) may be re-initiated',
  limit_reached: `A debit may be re-initiated at most ${MAX_REDEBITS} times`,
  window_closed: `A debit may be re-initiated within ${REDEBIT_WINDOW_DAYS} days of its effective entry date`,
};

const DAY_MS = 86_400_000;

/** Why the run's funding debit may not be re-debited today, or undefined when it may. */
export function redebitRefusal(
  funding: { status: FundingStatus; effective_entry_date: string; return_code: string | null; redebits: number },
  today: string,
): RedebitRefusal | undefined {
  if (funding.status !== 'returned') return 'not_returned';
  if (!funding.return_code || !REDEBITABLE_CODES.includes(funding.return_code)) return 'return_code';
  if (funding.redebits >= MAX_REDEBITS) return 'limit_reached';
  const days = (Date.parse(`${today}T00:00:00Z`) - Date.parse(`${funding.effective_entry_date}T00:00:00Z`)) / DAY_MS;
  if (days > REDEBIT_WINDOW_DAYS) return 'window_closed';
  return undefined;
}

/** At most this many payments per reversal request: each is two writes of the one transaction that reverses them. */
export const MAX_REVERSAL_PAYMENTS = 40;

export const REVERSAL_REASONS = ['duplicate', 'incorrect_amount', 'incorrect_account'] as const;
export type ReversalReason = (typeof REVERSAL_REASONS)[number];

/** A reversal must reach the bank within five banking days after the original entry's settlement date. */
export const REVERSAL_WINDOW_BANKING_DAYS = 5;

/** The last day a payment settled on `effectiveEntryDate` may still be reversed: the fifth banking day after it. */
export function reversalWindowEnds(effectiveEntryDate: string): string {
  let day = effectiveEntryDate;
  for (let i = 0; i < REVERSAL_WINDOW_BANKING_DAYS; i++) day = nextBankingDay(day);
  return day;
}

/**
 * When a file written now for money that should move as soon as it can (a re-debit, a reversal) reaches the bank and
 * settles: today if today is a banking day and it is not yet the cut-off (New York time), else the next banking day;
 * it settles the banking day after. `notBefore`: the earliest effective entry date it may carry (a reversal never
 * settles before the deposit it takes back): a later one is released the banking day before it.
 */
export function nextSettlement(
  now: { date: string; time: string },
  cutoff: string,
  notBefore?: string,
): { effective_entry_date: string; release_by: string } {
  const release = isBankingDay(now.date) && now.time < cutoff ? now.date : nextBankingDay(now.date);
  const soonest = nextBankingDay(release);
  if (notBefore === undefined || notBefore <= soonest) return { effective_entry_date: soonest, release_by: release };
  const effective = isBankingDay(notBefore) ? notBefore : nextBankingDay(notBefore);
  return { effective_entry_date: effective, release_by: previousBankingDay(effective) };
}
