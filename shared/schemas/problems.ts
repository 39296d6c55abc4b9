import type { z } from 'zod';
import type { ProblemDetail } from '../domain/errors.js';

/** The most characters of one name a field path quotes (a client's key may be any length). */
const MAX_NAME_QUOTED = 64;
/** The most characters of a field path: a few names of at most 65 characters, with their indexes. */
export const MAX_FIELD_PATH = 256;
const UNPRINTABLE = /(?![\u200C\u200D])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** At most `max` characters (code points), `…` marking a cut. */
function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}…`;
}

/**
 * `employees[3].hours_worked` from ['employees', 3, 'hours_worked']. Names come from the client's keys (an
 * unknown field, a deduction's name), so each is quoted as printable text (anything else becomes U+FFFD) and at
 * most 64 characters, and the whole path at most `MAX_FIELD_PATH`: a problem never echoes a body back.
 */
export function fieldPath(path: readonly PropertyKey[]): string {
  const joined = path.reduce<string>((acc, part) => {
    if (typeof part === 'number') return `${acc}[${part}]`;
    const name = cut(String(part).replace(UNPRINTABLE, '\uFFFD'), MAX_NAME_QUOTED);
    return acc ? `${acc}.${name}` : name;
  }, '');
  return cut(joined, MAX_FIELD_PATH - 1);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const part of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[part];
  }
  return cur;
}

const UNKNOWN_KEYS_LISTED = 20;

/**
 * zod issues as the contract's `details`: every problem, each with the field path and a stable code.
 * Custom refinements name their own code through `params.code`.
 */
export function problemsFromZod(
  error: z.ZodError,
  input: unknown,
  prefix: readonly PropertyKey[] = [],
): ProblemDetail[] {
  const out: ProblemDetail[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      // Named one by one up to a few, never echoing more than 64 characters of a name: a body of thousands of
      // unknown keys is answered in a few lines, not in a copy of itself.
      for (const key of issue.keys.slice(0, UNKNOWN_KEYS_LISTED)) {
        const name = key.length > 64 ? `${key.slice(0, 64)}…` : key;
        out.push({ field: fieldPath([...path, name]), code: 'unknown_field', message: `Unknown field "${name}"` });
      }
      if (issue.keys.length > UNKNOWN_KEYS_LISTED)
        out.push({
          field: fieldPath(path) || undefined,
          code: 'unknown_field',
          message: `${issue.keys.length - UNKNOWN_KEYS_LISTED} more unknown fields`,
        });
      continue;
    }
    const value = valueAt(input, issue.path);
    let code: string;
    let message = issue.message;
    if ((issue.code === 'invalid_type' || issue.code === 'invalid_union') && (value === undefined || value === null)) {
      code = 'required';
      message = 'This field is required';
    } else if (issue.code === 'custom') {
      code = (issue.params as { code?: string } | undefined)?.code ?? 'invalid';
    } else if (issue.code === 'too_small' || issue.code === 'too_big') {
      code = issue.origin === 'string' ? (issue.code === 'too_small' ? 'too_short' : 'too_long') : 'out_of_range';
      if (issue.origin === 'string' && issue.code === 'too_small' && value === '') {
        code = 'required';
        message = 'This field must not be blank';
      }
    } else {
      code = issue.code;
    }
    out.push({ field: fieldPath(path) || undefined, code, message });
  }
  return out.map((p) => (p.field === undefined ? { code: p.code, message: p.message } : p));
}
