import { monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

export type IdPrefix = 'org' | 'key' | 'emp' | 'pay' | 'stub' | 'evt' | 'whk' | 'req';

/** Time-ordered ids (ULID) with a readable type prefix: lists sort by creation without another attribute. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}

const ID_PATTERN = /^[a-z]{2,5}_[0-9a-hjkmnp-tv-z]{26}$/;

export function isWellFormedId(value: string, prefix: IdPrefix): boolean {
  return value.startsWith(`${prefix}_`) && ID_PATTERN.test(value);
}
