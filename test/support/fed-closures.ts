/**
 * The Federal Reserve's closures and the banking days they leave, from a table written by hand (not computed by the
 * code under test): what the bank-rule checks compare effective entry dates with.
 */
/**
 * The Federal Reserve Banks' closures, written out by hand from the published schedule (federalreserve.gov K.8,
 * "Holidays Observed by the Federal Reserve System") rather than computed: a Saturday holiday is absent (the
 * Banks open the Friday before), a Sunday one appears as the Monday after.
 */
export const FED_CLOSURES: Record<number, string[]> = {
  // Juneteenth (June 19) and Christmas fell on Saturdays and were not moved; July 4 was a Sunday.
  2021: [
    '2021-01-01',
    '2021-01-18',
    '2021-02-15',
    '2021-05-31',
    '2021-07-05',
    '2021-09-06',
    '2021-10-11',
    '2021-11-11',
    '2021-11-25',
  ],
  2025: [
    '2025-01-01',
    '2025-01-20',
    '2025-02-17',
    '2025-05-26',
    '2025-06-19',
    '2025-07-04',
    '2025-09-01',
    '2025-10-13',
    '2025-11-11',
    '2025-11-27',
    '2025-12-25',
  ],
  // Saturday July 4 is not moved.
  2026: [
    '2026-01-01',
    '2026-01-19',
    '2026-02-16',
    '2026-05-25',
    '2026-06-19',
    '2026-09-07',
    '2026-10-12',
    '2026-11-11',
    '2026-11-26',
    '2026-12-25',
  ],
  // Saturday June 19 and Saturday December 25 are not moved; Sunday July 4 is closed Monday July 5.
  2027: [
    '2027-01-01',
    '2027-01-18',
    '2027-02-15',
    '2027-05-31',
    '2027-07-05',
    '2027-09-06',
    '2027-10-11',
    '2027-11-11',
    '2027-11-25',
  ],
  // Saturday January 1 and Saturday November 11 are not moved.
  2028: [
    '2028-01-17',
    '2028-02-21',
    '2028-05-29',
    '2028-06-19',
    '2028-07-04',
    '2028-09-04',
    '2028-10-09',
    '2028-11-23',
    '2028-12-25',
  ],
  // Sunday November 11 is closed Monday November 12.
  2029: [
    '2029-01-01',
    '2029-01-15',
    '2029-02-19',
    '2029-05-28',
    '2029-06-19',
    '2029-07-04',
    '2029-09-03',
    '2029-10-08',
    '2029-11-12',
    '2029-11-22',
    '2029-12-25',
  ],
  2030: [
    '2030-01-01',
    '2030-01-21',
    '2030-02-18',
    '2030-05-27',
    '2030-06-19',
    '2030-07-04',
    '2030-09-02',
    '2030-10-14',
    '2030-11-11',
    '2030-11-28',
    '2030-12-25',
  ],
};

const closed = new Set(Object.values(FED_CLOSURES).flat());
const years = Object.keys(FED_CLOSURES).map(Number);

/** A weekday the Federal Reserve is open, by the table; a date outside the table's years is refused. */
export function isFedBankingDay(date: string): boolean {
  const year = Number(date.slice(0, 4));
  if (!years.includes(year)) throw new Error(`No published Fed closures for ${year}: extend FED_CLOSURES`);
  const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
  return weekday !== 0 && weekday !== 6 && !closed.has(date);
}

/** The last banking day on or before `date`, by the table: when a file dated for `date` settles. */
export function lastFedBankingDayOnOrBefore(date: string): string {
  let day = new Date(`${date}T00:00:00Z`);
  while (!isFedBankingDay(day.toISOString().slice(0, 10))) day = new Date(day.getTime() - 86_400_000);
  return day.toISOString().slice(0, 10);
}
