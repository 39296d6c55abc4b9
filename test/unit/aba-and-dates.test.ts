import { describe, expect, it } from 'vitest';
import { isValidRoutingNumber } from '../../shared/domain/aba.js';
import { isCalendarDate } from '../../shared/domain/dates.js';

describe('ABA routing numbers', () => {
  it.each(['021000021', '011000015', '122105155', '026009593', '322271627'])(
    'accepts the real routing number %s',
    (n) => {
      expect(isValidRoutingNumber(n)).toBe(true);
    },
  );

  it.each([
    ['021000022', 'wrong check digit'],
    ['12345678', 'eight digits'],
    ['0210000210', 'ten digits'],
    ['02100002a', 'a letter'],
    ['', 'empty'],
    ['500000005', 'prefix 50 is no Federal Reserve routing symbol'],
    ['000000000', 'all zeros: the checksum holds, but it names no bank'],
  ])('rejects %s (%s)', (n) => {
    expect(isValidRoutingNumber(n)).toBe(false);
  });
});

describe('calendar dates', () => {
  it.each(['2026-01-31', '2024-02-29', '2000-02-29', '2026-12-01'])('accepts %s', (d) =>
    expect(isCalendarDate(d)).toBe(true),
  );
  it.each([
    '2026-02-29',
    '1900-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31',
    '2026-1-5',
    '26-01-05',
    '2026-01-05T00:00:00Z',
    '',
  ])('rejects %s', (d) => expect(isCalendarDate(d)).toBe(false));
});
