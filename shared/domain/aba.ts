/**
 * ABA routing number check: 9 digits whose weighted sum 3-7-1 is a multiple of 10, and whose first two digits
 * are a Federal Reserve routing symbol (00 is the US government, 01–12 banks, 21–32 thrifts, 61–72 electronic, 80 travellers' cheques).
 */
export function isValidRoutingNumber(value: string): boolean {
  // All zeros passes the checksum, but names no bank: it is a placeholder, and an ACH operator rejects it.
  if (!/^\d{9}$/.test(value) || value === '000000000') return false;
  const prefix = Number(value.slice(0, 2));
  const knownPrefix = prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  return knownPrefix && withCheckDigit(value.slice(0, 8)) === value;
}

/** The routing number an 8-digit prefix makes with the check digit that satisfies the 3-7-1 weighted sum. */
export function withCheckDigit(prefix8: string): string {
  if (!/^\d{8}$/.test(prefix8)) throw new RangeError(`A routing prefix is 8 digits, got '${prefix8}'`);
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = weights.reduce((acc, w, i) => acc + w * Number(prefix8[i]), 0);
  return prefix8 + String((10 - (sum % 10)) % 10);
}
