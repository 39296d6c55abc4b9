import { InexactNumber } from './strict-json.js';

/**
 * Money is held as integer cents. Inputs are JSON numbers or numeric strings with at most two decimals; they
 * are parsed from their decimal text, never through binary floating point arithmetic. Every total stays far
 * below Number.MAX_SAFE_INTEGER cents (about 90 trillion dollars), and each operation checks that it does.
 */
export type Cents = number;

const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d{1,2}))?$/;

/**
 * The most any amount may be written as: 13 integer digits, far above what one NACHA file carries
 * (9,999,999,999.99) and still exact as integer cents. Longer amounts are refused as out of range, never parsed.
 */
export const MAX_PARSED_INTEGER_DIGITS = 13;

export type MoneyParse =
  | { ok: true; cents: Cents }
  | { ok: false; reason: 'negative' | 'format' | 'precision' | 'out_of_range' };

export function parseMoney(value: unknown): MoneyParse {
  let text: string;
  if (value instanceof InexactNumber) {
    // More digits than a double holds: the text as sent, so its decimals are counted, never rounded away.
    text = value.text;
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, reason: 'format' };
    // String(n) of a double gives the shortest text that round-trips, i.e. what the client wrote (0.1 → "0.1").
    text = String(value);
  } else if (typeof value === 'string') {
    // As sent: " 10" is not a numeric string (CONTRACT §5), it is refused rather than trimmed.
    text = value;
  } else {
    return { ok: false, reason: 'format' };
  }
  if (text.startsWith('-')) {
    return /^-\d/.test(text) && !/^-0*(\.0*)?$/.test(text)
      ? { ok: false, reason: 'negative' }
      : { ok: false, reason: 'format' };
  }
  const m = text.length <= 64 ? DECIMAL.exec(text) : null;
  if (m && m[1]!.length > MAX_PARSED_INTEGER_DIGITS) return { ok: false, reason: 'out_of_range' };
  if (!m) return /^\d+\.\d{3,}$/.test(text) ? { ok: false, reason: 'precision' } : { ok: false, reason: 'format' };
  const cents = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return { ok: true, cents };
}

export function addCents(a: Cents, b: Cents): Cents {
  const sum = a + b;
  if (!Number.isSafeInteger(sum)) throw new RangeError('Money total out of range');
  return sum;
}

export function sumCents(values: Iterable<Cents>): Cents {
  let total = 0;
  for (const v of values) total = addCents(total, v);
  return total;
}

/** Cents as the decimal string stored and signed over ("1234.50"). */
export function formatCents(cents: Cents): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Cents as the JSON number the API answers with: exact, because a two-decimal value's shortest form is itself. */
export function centsToNumber(cents: Cents): number {
  return Number(formatCents(cents));
}
