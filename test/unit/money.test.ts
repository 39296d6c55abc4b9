import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centsToNumber, formatCents, parseMoney, sumCents } from '../../shared/domain/money.js';
import { InexactNumber } from '../../shared/domain/strict-json.js';

/** Reference: decimal text to cents with BigInt only. */
function referenceCents(text: string): bigint {
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole!) * 100n + BigInt(frac.padEnd(2, '0'));
}

describe('money', () => {
  it.each([
    ['0', 0],
    ['0.1', 10],
    ['0.10', 10],
    ['1234.56', 123456],
    ['100000000.00', 10_000_000_000],
  ])('parses %j as %d cents', (input, cents) => {
    expect(parseMoney(input)).toEqual({ ok: true, cents });
  });

  it.each([
    [0.1, 10],
    [1234.56, 123456],
    [0, 0],
    [19.99, 1999],
    [0.07, 7],
  ])('parses the JSON number %d from its decimal text, not its binary value', (input, cents) => {
    expect(parseMoney(input)).toEqual({ ok: true, cents });
  });

  it.each([
    ['-1', 'negative'],
    [-0.01, 'negative'],
    ['1.234', 'precision'],
    [0.1 + 0.2, 'precision'],
    ['1e3', 'format'],
    // CONTRACT §5: a numeric string with spaces is refused, never trimmed.
    [' 10', 'format'],
    ['12.5 ', 'format'],
    // More digits than a double holds, kept as written by the request parser: counted, never rounded to 1000.
    [new InexactNumber('1000.00000000000001'), 'precision'],
    ['', 'format'],
    ['abc', 'format'],
    ['01.00', 'format'],
    [Number.POSITIVE_INFINITY, 'format'],
    [1e309, 'format'],
    [Number.NaN, 'format'],
    [null, 'format'],
    [true, 'format'],
    ['1.', 'format'],
    ['.5', 'format'],
    ['1,000', 'format'],
    // More than 13 integer digits: no amount could be paid, and cents would no longer be exact integers.
    ['99999999999999.99', 'out_of_range'],
    ['999999999999999.99', 'out_of_range'],
    [1e20, 'out_of_range'],
    ['9'.repeat(400), 'format'],
  ])('rejects %j as %s', (input, reason) => {
    expect(parseMoney(input)).toEqual({ ok: false, reason });
  });

  it('agrees with a BigInt reference on every two-decimal amount (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 2 }), (cents, places) => {
        const whole = cents / 100n;
        const frac = (cents % 100n).toString().padStart(2, '0');
        const text = places === 0 ? whole.toString() : `${whole}.${frac.slice(0, places)}`;
        const parsed = parseMoney(text);
        expect(parsed.ok).toBe(true);
        if (parsed.ok) expect(BigInt(parsed.cents)).toBe(referenceCents(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('sums exactly where floating point would drift (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 10_000_000 }), { maxLength: 200 }), (values) => {
        const exact = values.reduce((a, b) => a + BigInt(b), 0n);
        expect(BigInt(sumCents(values))).toBe(exact);
        expect(formatCents(sumCents(values))).toBe(`${exact / 100n}.${(exact % 100n).toString().padStart(2, '0')}`);
      }),
      { numRuns: 500 },
    );
  });

  it('formats and answers cents as two-decimal values', () => {
    expect(formatCents(5)).toBe('0.05');
    expect(formatCents(123456)).toBe('1234.56');
    expect(centsToNumber(1999)).toBe(19.99);
    expect(centsToNumber(10)).toBe(0.1);
  });

  it('refuses a total beyond the safe integer range instead of rounding', () => {
    expect(() => sumCents([Number.MAX_SAFE_INTEGER, 1])).toThrow(RangeError);
  });
});

describe('the largest amount parsed', () => {
  it('parses 13 integer digits exactly: every parsed amount is a safe integer of cents', () => {
    expect(parseMoney('9999999999999.99')).toEqual({ ok: true, cents: 999_999_999_999_999 });
    expect(Number.isSafeInteger(999_999_999_999_999)).toBe(true);
  });
});
