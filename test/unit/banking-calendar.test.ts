import fc from 'fast-check';
import { FED_CLOSURES } from '../support/fed-closures.js';
import { describe, expect, it } from 'vitest';
import {
  BANK_TIME_ZONE,
  dateInTimeZone,
  earliestPayDate,
  effectiveEntryDate,
  federalReserveHolidays,
  isBankingDay,
  nextBankingDay,
  previousBankingDay,
  releaseBy,
} from '../../shared/domain/banking-calendar.js';

// Test-side date helpers, independent of the module under test.
const DAY_MS = 86_400_000;
const toMs = (d: string): number => Date.parse(`${d}T00:00:00Z`);
const fromMs = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const addDays = (d: string, n: number): string => fromMs(toMs(d) + n * DAY_MS);
const weekdayOf = (d: string): number => new Date(toMs(d)).getUTCDay();
const daysBetween = (a: string, b: string): number => Math.round((toMs(b) - toMs(a)) / DAY_MS);

function* daysOfYear(year: number): Generator<string> {
  for (let d = `${year}-01-01`; d.startsWith(String(year)); d = addDays(d, 1)) yield d;
}

const FIRST = toMs('2020-01-01');
const LAST = toMs('2035-12-31');
const dateArb = fc.integer({ min: 0, max: (LAST - FIRST) / DAY_MS }).map((n) => fromMs(FIRST + n * DAY_MS));

describe('Federal Reserve holidays', () => {
  it.each(Object.entries(FED_CLOSURES))('lists the published closures of %s', (year, closures) => {
    expect(federalReserveHolidays(Number(year))).toEqual(closures);
  });

  it.each(Object.entries(FED_CLOSURES))(
    'classifies every day of %s as the weekday calendar minus the closures',
    (year, closures) => {
      for (const d of daysOfYear(Number(year))) {
        const weekday = weekdayOf(d) !== 0 && weekdayOf(d) !== 6;
        expect(isBankingDay(d), d).toBe(weekday && !closures.includes(d));
      }
    },
  );

  it('double-checks the table: every closure is a weekday', () => {
    for (const d of Object.values(FED_CLOSURES).flat()) expect([1, 2, 3, 4, 5], d).toContain(weekdayOf(d));
  });

  it.each([
    ['2026-07-03', 'Friday before Saturday July 4 2026'],
    ['2027-06-18', 'Friday before Saturday June 19 2027'],
    ['2027-12-24', 'Friday before Saturday December 25 2027'],
    ['2027-12-31', 'Friday before Saturday January 1 2028'],
    ['2028-11-10', 'Friday before Saturday November 11 2028'],
    ['2025-11-28', 'the Friday after Thanksgiving'],
    ['2026-12-24', 'Christmas Eve'],
  ])('%s is a banking day (%s)', (d) => {
    expect(isBankingDay(d)).toBe(true);
  });

  it.each([
    ['2027-07-05', 'Monday after Sunday July 4 2027'],
    ['2029-11-12', 'Monday after Sunday November 11 2029'],
    ['2026-07-04', 'a Saturday holiday'],
    ['2026-07-05', 'a plain Sunday'],
  ])('%s is not a banking day (%s)', (d) => {
    expect(isBankingDay(d)).toBe(false);
  });

  it('does not close for Juneteenth before it became a holiday in 2021', () => {
    expect(isBankingDay('2020-06-19')).toBe(true);
    expect(federalReserveHolidays(2020)).not.toContain('2020-06-19');
  });

  it('moves a Sunday January 1 to Monday January 2', () => {
    expect(federalReserveHolidays(2023)).toContain('2023-01-02');
    expect(isBankingDay('2023-01-02')).toBe(false);
  });
});

describe('entry and release dates', () => {
  it.each([
    // pay date, effective entry date, release by, why
    ['2026-07-04', '2026-07-03', '2026-07-02', 'Saturday (a holiday, not moved) settles Friday'],
    ['2026-03-08', '2026-03-06', '2026-03-05', 'Sunday settles Friday'],
    ['2026-12-25', '2026-12-24', '2026-12-23', 'Christmas on a Friday'],
    ['2025-12-25', '2025-12-24', '2025-12-23', 'Christmas on a Thursday'],
    ['2026-09-07', '2026-09-04', '2026-09-03', 'Labor Day, a Monday holiday'],
    ['2026-09-08', '2026-09-08', '2026-09-04', 'Tuesday after Labor Day releases the Friday before'],
    ['2026-11-26', '2026-11-25', '2026-11-24', 'Thanksgiving'],
    ['2026-11-27', '2026-11-27', '2026-11-25', 'the Friday after Thanksgiving releases Wednesday'],
    ['2026-11-28', '2026-11-27', '2026-11-25', 'the Saturday after Thanksgiving'],
    ['2026-11-30', '2026-11-30', '2026-11-27', 'the Monday after Thanksgiving'],
    ['2027-07-05', '2027-07-02', '2027-07-01', 'observed Independence Day'],
    ['2028-01-03', '2028-01-03', '2027-12-31', 'Monday after a Saturday January 1: Dec 31 is open'],
    ['2026-01-02', '2026-01-02', '2025-12-31', 'Friday after New Year'],
    ['2026-06-15', '2026-06-15', '2026-06-12', 'a plain Monday'],
  ])('pay date %s → effective %s, release by %s (%s)', (payDate, effective, release) => {
    expect(effectiveEntryDate(payDate)).toBe(effective);
    expect(releaseBy(payDate)).toBe(release);
  });

  it.each([
    ['2026-09-03', '2026-09-04', 'a banking day: the next banking day'],
    ['2026-09-04', '2026-09-08', 'Friday before Labor Day'],
    ['2026-09-05', '2026-09-09', 'Saturday: first release is Tuesday'],
    ['2026-09-07', '2026-09-09', 'Labor Day itself'],
    ['2026-11-25', '2026-11-27', 'Wednesday before Thanksgiving'],
    ['2026-11-26', '2026-11-30', 'Thanksgiving'],
    ['2027-12-31', '2028-01-03', 'Dec 31 2027 is open'],
  ])('earliestPayDate(%s) is %s (%s)', (today, expected) => {
    expect(earliestPayDate(today)).toBe(expected);
  });
});

describe('banking-day properties (2020–2035)', () => {
  it('nextBankingDay is the first banking day strictly after', () => {
    fc.assert(
      fc.property(dateArb, (d) => {
        const next = nextBankingDay(d);
        expect(next > d).toBe(true);
        expect(isBankingDay(next)).toBe(true);
        for (let x = addDays(d, 1); x < next; x = addDays(x, 1)) expect(isBankingDay(x), x).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('previousBankingDay is the last banking day strictly before', () => {
    fc.assert(
      fc.property(dateArb, (d) => {
        const prev = previousBankingDay(d);
        expect(prev < d).toBe(true);
        expect(isBankingDay(prev)).toBe(true);
        for (let x = addDays(d, -1); x > prev; x = addDays(x, -1)) expect(isBankingDay(x), x).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('previousBankingDay(nextBankingDay(d)) ≤ d, with equality exactly on banking days', () => {
    fc.assert(
      fc.property(dateArb, (d) => {
        const back = previousBankingDay(nextBankingDay(d));
        expect(back <= d).toBe(true);
        expect(back === d).toBe(isBankingDay(d));
      }),
      { numRuns: 1000 },
    );
  });

  it('effectiveEntryDate is a banking day on or at most 4 days before the pay date', () => {
    fc.assert(
      fc.property(dateArb, (d) => {
        const effective = effectiveEntryDate(d);
        expect(effective <= d).toBe(true);
        expect(isBankingDay(effective)).toBe(true);
        expect(daysBetween(effective, d)).toBeLessThanOrEqual(4);
        expect(effective === d).toBe(isBankingDay(d));
      }),
      { numRuns: 1000 },
    );
  });

  it('releaseBy is the banking day before the effective entry date', () => {
    fc.assert(
      fc.property(dateArb, (d) => {
        const release = releaseBy(d);
        expect(release < effectiveEntryDate(d)).toBe(true);
        expect(isBankingDay(release)).toBe(true);
        expect(nextBankingDay(release)).toBe(effectiveEntryDate(d));
      }),
      { numRuns: 1000 },
    );
  });

  it('earliestPayDate is the smallest pay date whose release is on or after today (brute force)', () => {
    fc.assert(
      fc.property(dateArb, (today) => {
        let bruteForce = today;
        while (releaseBy(bruteForce) < today) bruteForce = addDays(bruteForce, 1);
        const earliest = earliestPayDate(today);
        expect(earliest).toBe(bruteForce);
        expect(releaseBy(earliest) >= today).toBe(true);
        expect(isBankingDay(earliest)).toBe(true);
        expect(releaseBy(addDays(earliest, -1)) < today).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('is never a banking day on a Saturday or Sunday', () => {
    const weekendArb = dateArb
      .map((d) => addDays(d, (6 - weekdayOf(d) + 7) % 7))
      .chain((saturday) => fc.constantFrom(saturday, addDays(saturday, 1)));
    fc.assert(
      fc.property(weekendArb, (d) => {
        expect([0, 6]).toContain(weekdayOf(d));
        expect(isBankingDay(d)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('does not depend on the machine time zone', () => {
    const saved = process.env.TZ;
    const sample = ['2026-03-08', '2026-11-01', '2027-12-31', '2028-02-29', '2029-11-11'];
    const expected = sample.map((d) => [isBankingDay(d), nextBankingDay(d), previousBankingDay(d), releaseBy(d)]);
    try {
      for (const tz of ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/New_York']) {
        process.env.TZ = tz;
        expect(sample.map((d) => [isBankingDay(d), nextBankingDay(d), previousBankingDay(d), releaseBy(d)])).toEqual(
          expected,
        );
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
});

describe('argument validation', () => {
  it.each(['2026-02-29', '2026-13-01', '2026-1-5', '', '2026-01-05T00:00:00Z'])('rejects %j, naming it', (bad) => {
    const dateFunctions = [
      isBankingDay,
      nextBankingDay,
      previousBankingDay,
      effectiveEntryDate,
      releaseBy,
      earliestPayDate,
    ];
    for (const fn of dateFunctions) expect(() => fn(bad)).toThrow(JSON.stringify(bad));
  });

  it('answers for the first days of the earliest calendar date accepted (1900), stepping back into 1899', () => {
    // 1900-01-01 was a Monday and New Year's Day: settled the Friday before, released the Thursday.
    expect(effectiveEntryDate('1900-01-01')).toBe('1899-12-29');
    expect(releaseBy('1900-01-01')).toBe('1899-12-28');
    expect(previousBankingDay('1900-01-02')).toBe('1899-12-29');
  });

  it('rejects a year that is not a whole number', () => {
    expect(() => federalReserveHolidays(2026.5)).toThrow('2026.5');
  });

  it('rejects an invalid instant', () => {
    expect(() => dateInTimeZone(new Date(Number.NaN), BANK_TIME_ZONE)).toThrow(/instant/);
  });
});

describe('dateInTimeZone', () => {
  it('uses New York as the bank time zone', () => {
    expect(BANK_TIME_ZONE).toBe('America/New_York');
  });

  it.each([
    ['2026-11-26T00:30:00Z', '2026-11-25', '1930', 'EST, the evening before Thanksgiving'],
    ['2026-07-01T03:59:00Z', '2026-06-30', '2359', 'EDT'],
    ['2026-03-08T06:59:00Z', '2026-03-08', '0159', 'last minute of EST before spring forward'],
    ['2026-03-08T07:00:00Z', '2026-03-08', '0300', 'spring forward skips 02:00–02:59'],
    ['2026-11-01T05:59:00Z', '2026-11-01', '0159', 'last minute of EDT'],
    ['2026-11-01T06:00:00Z', '2026-11-01', '0100', 'fall back repeats 01:00 in EST'],
    ['2026-11-01T06:30:00Z', '2026-11-01', '0130', 'the repeated hour'],
    ['2026-01-15T05:00:00Z', '2026-01-15', '0000', 'midnight EST'],
    ['2026-07-01T04:00:00Z', '2026-07-01', '0000', 'midnight EDT'],
    ['2026-03-09T04:00:00Z', '2026-03-09', '0000', 'first midnight of EDT'],
  ])('%s is %s %s in New York (%s)', (iso, date, time) => {
    expect(dateInTimeZone(new Date(iso), BANK_TIME_ZONE)).toEqual({ date, time });
  });

  it('reports midnight as 0000 in UTC too', () => {
    expect(dateInTimeZone(new Date('2027-01-01T00:00:00Z'), 'UTC')).toEqual({ date: '2027-01-01', time: '0000' });
  });

  it('agrees with the UTC offset arithmetic on every minute-aligned instant (property)', () => {
    // New York is UTC-5 in winter and UTC-4 in summer; a mid-January or mid-July instant is unambiguous.
    fc.assert(
      fc.property(
        fc.integer({ min: 2020, max: 2035 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 24 * 60 - 1 }),
        (year, summer, minute) => {
          const offsetHours = summer ? 4 : 5;
          const local = Date.UTC(year, summer ? 6 : 0, 15, 0, minute);
          const result = dateInTimeZone(new Date(local + offsetHours * 3_600_000), BANK_TIME_ZONE);
          const iso = new Date(local).toISOString();
          expect(result).toEqual({ date: iso.slice(0, 10), time: iso.slice(11, 13) + iso.slice(14, 16) });
        },
      ),
      { numRuns: 500 },
    );
  });
});
