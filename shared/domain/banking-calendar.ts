import { isCalendarDate } from './dates.js';

/**
 * The US ACH banking-day calendar: the days the Federal Reserve settles ACH entries, and the dates a payroll's
 * NACHA file derives from them. Dates are YYYY-MM-DD strings. Day arithmetic runs on UTC midnights (Date.UTC)
 * so that the machine's own time zone and its DST changes can never shift a date by one.
 *
 * The holiday rules are written out by hand rather than taken from a general holiday library because such a
 * library's US calendar follows federal-employee observance, which moves a Saturday holiday to the Friday before.
 * The Federal Reserve does not: on that Friday it is open and ACH settles; it only moves a Sunday holiday to the
 * Monday after. Trusting the library would make every such Friday a non-banking day, pulling pay a day early and
 * making files due a day early. A Saturday January 1 likewise leaves December 31 of the year before open.
 */

export const BANK_TIME_ZONE = 'America/New_York';

const DAY_MS = 86_400_000;
const SUNDAY = 0;
const MONDAY = 1;
const THURSDAY = 4;
const SATURDAY = 6;
// Juneteenth became a federal holiday in June 2021 (a Saturday that year); earlier years must not gain a closure.
const FIRST_JUNETEENTH = 2021;

function assertDate(date: string): void {
  if (!isCalendarDate(date)) throw new RangeError(`Not a calendar date (YYYY-MM-DD): ${JSON.stringify(date)}`);
}

function toUtc(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)));
}

function fromUtc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function weekday(ms: number): number {
  return new Date(ms).getUTCDay();
}

/** A fixed-date holiday as the Fed observes it: only a Sunday one moves (see the module comment). */
function fixed(year: number, month: number, day: number): string {
  const ms = Date.UTC(year, month - 1, day);
  return fromUtc(weekday(ms) === SUNDAY ? ms + DAY_MS : ms);
}

function nthWeekday(year: number, month: number, dow: number, n: number): string {
  const first = Date.UTC(year, month - 1, 1);
  return fromUtc(first + (((dow - weekday(first) + 7) % 7) + 7 * (n - 1)) * DAY_MS);
}

function lastWeekday(year: number, month: number, dow: number): string {
  const last = Date.UTC(year, month, 0);
  return fromUtc(last - ((weekday(last) - dow + 7) % 7) * DAY_MS);
}

function computeHolidays(year: number): string[] {
  // Calendar dates start in 1900 (isCalendarDate), but stepping back from the first days of 1900 reaches 1899.
  if (!Number.isInteger(year) || year < 1800 || year > 9999) throw new RangeError(`Not a supported year: ${year}`);
  const dates = [
    fixed(year, 1, 1),
    nthWeekday(year, 1, MONDAY, 3),
    nthWeekday(year, 2, MONDAY, 3),
    lastWeekday(year, 5, MONDAY),
    ...(year >= FIRST_JUNETEENTH ? [fixed(year, 6, 19)] : []),
    fixed(year, 7, 4),
    nthWeekday(year, 9, MONDAY, 1),
    nthWeekday(year, 10, MONDAY, 2),
    fixed(year, 11, 11),
    nthWeekday(year, 11, THURSDAY, 4),
    fixed(year, 12, 25),
  ];
  // A Saturday holiday closes nothing the weekend does not already close, so it is no closure to list.
  return dates.filter((d) => weekday(toUtc(d)) !== SATURDAY).sort();
}

// Every banking-day step consults a year's holidays; memoising keeps the stepping loops cheap.
const holidayCache = new Map<number, ReadonlySet<string>>();

function holidaySet(year: number): ReadonlySet<string> {
  let set = holidayCache.get(year);
  if (!set) {
    set = new Set(computeHolidays(year));
    holidayCache.set(year, set);
  }
  return set;
}

/**
 * The weekdays in `year` on which the Federal Reserve is closed, sorted. A holiday that falls on a Saturday is
 * absent: the Fed is closed that day anyway and open the Friday before.
 */
export function federalReserveHolidays(year: number): string[] {
  return [...holidaySet(year)];
}

// Callers' dates are validated once at the public entry; the stepping loops then use these unchecked forms.
function banking(date: string): boolean {
  const dow = weekday(toUtc(date));
  return dow !== SATURDAY && dow !== SUNDAY && !holidaySet(Number(date.slice(0, 4))).has(date);
}

function step(date: string, direction: 1 | -1): string {
  let ms = toUtc(date);
  do ms += direction * DAY_MS;
  while (!banking(fromUtc(ms)));
  return fromUtc(ms);
}

export function isBankingDay(date: string): boolean {
  assertDate(date);
  return banking(date);
}

export function nextBankingDay(date: string): string {
  assertDate(date);
  return step(date, 1);
}

export function previousBankingDay(date: string): string {
  assertDate(date);
  return step(date, -1);
}

/** The settlement date for a pay date: earlier, never later, when the pay date is no banking day. */
export function effectiveEntryDate(payDate: string): string {
  assertDate(payDate);
  return banking(payDate) ? payDate : step(payDate, -1);
}

/** The day the file must reach the bank: one banking day before settlement. */
export function releaseBy(payDate: string): string {
  return step(effectiveEntryDate(payDate), -1);
}

/** The earliest pay date whose file can still be released on or after `today`. */
export function earliestPayDate(today: string): string {
  assertDate(today);
  // releaseBy never decreases as the pay date grows, and releaseBy(nextBankingDay(r)) is r for a banking day r,
  // so the answer is the banking day after the first possible release day.
  const firstRelease = banking(today) ? today : step(today, 1);
  return step(firstRelease, 1);
}

// Building a DateTimeFormat is costly compared to formatting with one; the set of zones in use is small.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    // hourCycle 'h23' rather than hour12: false, which some ICU versions render as "24" at midnight.
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall-clock calendar date and HHMM time of `instant` in the IANA `timeZone`. */
export function dateInTimeZone(instant: Date, timeZone: string): { date: string; time: string } {
  if (!(instant instanceof Date) || Number.isNaN(instant.getTime())) {
    throw new RangeError(`Not a valid instant: ${String(instant)}`);
  }
  const parts = formatter(timeZone).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes): string => {
    const value = parts.find((p) => p.type === type)?.value;
    if (value === undefined) throw new Error(`Intl.DateTimeFormat gave no ${type} for ${instant.toISOString()}`);
    return value;
  };
  const date = `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
  return { date, time: `${part('hour')}${part('minute')}` };
}

/** A wall-clock time of day, `HH:MM` on a 24-hour clock. */
export const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * The instant at which the wall clock in `timeZone` reads `date` `time` (`HH:MM`). A wall time a DST change skips
 * (02:30 on the spring-forward day) resolves to the instant an hour earlier; one it repeats (01:30 in the fall), to
 * its first occurrence.
 */
export function zonedInstant(date: string, time: string, timeZone: string): Date {
  assertDate(date);
  if (!TIME_OF_DAY.test(time)) throw new RangeError(`Not a time of day (HH:MM): ${time}`);
  const wanted = Date.parse(`${date}T${time}:00Z`);
  // The zone's offset at a guess, applied, then checked once more: the guess may sit across a DST change.
  let instant = wanted;
  for (let i = 0; i < 2; i++) {
    const seen = dateInTimeZone(new Date(instant), timeZone);
    const shown = Date.parse(`${seen.date}T${seen.time.slice(0, 2)}:${seen.time.slice(2)}:00Z`);
    instant += wanted - shown;
  }
  return new Date(instant);
}
