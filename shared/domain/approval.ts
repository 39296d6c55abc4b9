import { BANK_TIME_ZONE, dateInTimeZone, earliestPayDate, nextBankingDay, zonedInstant } from './banking-calendar.js';
import { bankToday } from './disbursement.js';
import { approvalCutoffTime, type OrganizationSettings } from './settings.js';

/** The instant a run must be approved by: its `release_by` day at the organization's cut-off, New York time. */
export function approveBy(releaseBy: string, settings: Pick<OrganizationSettings, 'approval_cutoff_time'>): string {
  return zonedInstant(releaseBy, approvalCutoffTime(settings), BANK_TIME_ZONE).toISOString();
}

/** The earliest pay date whose approval deadline is still ahead of `now`. */
export function earliestApprovablePayDate(now: Date, cutoff: string): string {
  const { time } = dateInTimeZone(now, BANK_TIME_ZONE);
  const today = bankToday(now);
  // Past today's cut-off, today's release is gone: the first release day still open is tomorrow's at the earliest.
  return earliestPayDate(time >= cutoff.replace(':', '') ? nextBankingDay(today) : today);
}
