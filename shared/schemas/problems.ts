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
      for (const key of issue.keys) {
        out.push({ field: fieldPath([...path, key]), code: 'unknown_field', message: `Unknown field "${key}"` });
      }
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
