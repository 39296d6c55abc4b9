import { createHash } from 'node:crypto';
import { encodeTime, monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

export type IdPrefix = 'org' | 'key' | 'emp' | 'pay' | 'stub' | 'evt' | 'whk' | 'req' | 'acct' | 'file';

/** Time-ordered ids (ULID) with a readable type prefix: lists sort by creation without another attribute. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}

const ID_PATTERN = /^[a-z]{2,5}_[0-9a-hjkmnp-tv-z]{26}$/;

export function isWellFormedId(value: string, prefix: IdPrefix): boolean {
  return value.startsWith(`${prefix}_`) && ID_PATTERN.test(value);
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * An id derived from what it identifies (e.g. a paystub from its payroll and employee): a processor that runs
 * twice computes the same id and overwrites the same item instead of creating a second one.
 */
export function deterministicId(prefix: IdPrefix, ...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length === 26) break;
  }
  return `${prefix}_${out}`;
}

/**
 * A time-ordered id derived from what it identifies: the time part of a ULID for `at`, then a digest of `parts`. A
 * run's file written again by a finalize delivered twice gets the same id, and still sorts among the organization's
 * files by when it was written.
 */
export function deterministicTimedId(prefix: IdPrefix, at: Date, ...parts: string[]): string {
  return `${prefix}_${encodeTime(at.getTime(), 10).toLowerCase()}${deterministicId(prefix, ...parts).slice(prefix.length + 1, prefix.length + 17)}`;
}
