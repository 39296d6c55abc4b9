import type { z } from 'zod';
import type { ProblemDetail } from '../domain/errors.js';

/** `employees[3].hours_worked` from ['employees', 3, 'hours_worked']. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, part) => {
    if (typeof part === 'number') return `${acc}[${part}]`;
    return acc ? `${acc}.${String(part)}` : String(part);
  }, '');
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
