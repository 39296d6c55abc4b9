import { parse } from 'lossless-json';

/**
 * Request bodies read as the client wrote them (CONTRACT §1, §5): an object naming a key twice is refused, never
 * "the last one wins", and a number is kept as its text when a double cannot hold it exactly, so money decimals
 * are counted on what was sent (`1000.00000000000001` is refused, not rounded to 1000).
 */

/** A JSON number a double cannot represent exactly, as written: money reads its text, anything else refuses it. */
export class InexactNumber {
  constructor(readonly text: string) {}
}

export type StrictJsonResult =
  | { ok: true; value: unknown }
  | { ok: false; problem: 'syntax'; message: string }
  | { ok: false; problem: 'too_deep'; message: string }
  | { ok: false; problem: 'duplicate_key'; key: string; path: string };

/** No request of this API nests deeper than a few levels; a body nesting past this is refused before it is parsed. */
export const MAX_DEPTH = 64;

export function parseStrictJson(text: string): StrictJsonResult {
  // The scan comes first and stops at MAX_DEPTH, so a body of a million `[` costs no parser's memory or stack.
  const scan = scanKeysAndNumbers(text);
  if (scan.tooDeep) return { ok: false, problem: 'too_deep', message: `Nested deeper than ${MAX_DEPTH} levels` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: 'syntax', message: (err as Error).message };
  }
  if (scan.duplicate) return { ok: false, problem: 'duplicate_key', ...scan.duplicate };
  // The rare body with a number a double cannot hold is read again, keeping such numbers as their text; every other
  // body is what JSON.parse made of it (several times faster on a 25,000-entry run).
  if (scan.inexact) {
    try {
      value = parse(text, null, { parseNumber: numberOf, onDuplicateKey: ({ newValue }) => newValue });
    } catch (err) {
      return { ok: false, problem: 'syntax', message: (err as Error).message };
    }
  }
  return { ok: true, value };
}

function numberOf(text: string): number | InexactNumber {
  const n = Number(text);
  return Number.isFinite(n) && sameDecimal(text, String(n)) ? n : new InexactNumber(text);
}

/** Whether two JSON number texts denote the same decimal value (`10.50` and `10.5`, `1e2` and `100`). */
function sameDecimal(a: string, b: string): boolean {
  const x = canonical(a);
  const y = canonical(b);
  return x.sign === y.sign && x.digits === y.digits && (x.digits === '' || x.exponent === y.exponent);
}

/** A decimal as significant digits (no leading or trailing zeros) and the power of ten of its last digit. */
function canonical(text: string): { sign: string; digits: string; exponent: number } {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return { sign: '', digits: text, exponent: 0 };
  const [, sign = '', whole = '', fraction = '', exp = '0'] = m;
  let digits = (whole + fraction).replace(/^0+/, '');
  let exponent = Number(exp) - fraction.length;
  const trailing = /0*$/.exec(digits)![0].length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += trailing;
  return { sign: digits === '' ? '' : sign, digits, exponent };
}

interface Container {
  /** An object's keys so far; none for an array. */
  keys?: Set<string>;
  parent?: Container;
  /** Where this container sits in its parent: a key, or an index. */
  at?: string | number;
  /** An object's next string is a key. */
  expectKey: boolean;
  index: number;
  lastKey: string;
}

interface Scan {
  duplicate?: { key: string; path: string };
  inexact: boolean;
  tooDeep: boolean;
}

/**
 * One pass over `text`: whether it nests past MAX_DEPTH, the first key an object names twice (with the path of that
 * object), and whether any number has more significant digits than a double holds exactly. Hand-written because the
 * parsers available report a repeated key only when its values differ (lossless-json) or not at all (JSON.parse):
 * `{"a":1,"a":1}` would pass. Keys are compared decoded, so `"a"` and `"\u0061"` are one. Only the open containers
 * are kept (at most MAX_DEPTH), so its memory does not grow with the body.
 */
function scanKeysAndNumbers(text: string): Scan {
  const scan: Scan = { inexact: false, tooDeep: false };
  let top: Container | undefined;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const { end, escaped } = stringEnd(text, i);
      if (top?.keys && top.expectKey && !scan.duplicate) {
        const key = escaped ? decodeKey(text, i, end) : text.slice(i + 1, end);
        if (top.keys.has(key)) scan.duplicate = { key, path: pathOf(top) };
        top.keys.add(key);
        top.expectKey = false;
        top.lastKey = key;
      }
      i = end;
    } else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) {
      const end = numberEnd(text, i);
      if (!scan.inexact && mayBeInexact(text, i, end) && !isExact(text.slice(i, end))) scan.inexact = true;
      i = end - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_DEPTH) return { ...scan, tooDeep: true };
      const at = top === undefined ? undefined : top.keys ? top.lastKey : top.index;
      top = { parent: top, at, expectKey: c === OPEN_BRACE, index: 0, lastKey: '' };
      if (c === OPEN_BRACE) top.keys = new Set();
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      top = top?.parent;
      depth = Math.max(0, depth - 1);
    } else if (c === COMMA && top) {
      if (top.keys) top.expectKey = true;
      else top.index += 1;
    }
  }
  return scan;
}

/** `employees[1].deductions`: built only for the report of a repeated key. */
function pathOf(container: Container): string {
  const parts: (string | number)[] = [];
  for (let c = container; c.parent; c = c.parent) parts.unshift(c.at!);
  return parts.reduce<string>(
    (path, part) => (typeof part === 'number' ? `${path}[${part}]` : path === '' ? part : `${path}.${part}`),
    '',
  );
}

const code = (ch: string) => ch.charCodeAt(0);
const QUOTE = code('"');
const BACKSLASH = code('\\');
const MINUS = code('-');
const DIGIT_0 = code('0');
const DIGIT_9 = code('9');
const OPEN_BRACE = code('{');
const OPEN_BRACKET = code('[');
const CLOSE_BRACE = code('}');
const CLOSE_BRACKET = code(']');
const COMMA = code(',');

/**
 * A number of at most 15 characters and no exponent has at most 15 significant digits, which a double always holds
 * exactly; an exponent can take a short number out of range (`1e-400` is 0 to a double).
 */
const EXACT_DIGITS = 15;

function mayBeInexact(text: string, start: number, end: number): boolean {
  if (end - start > EXACT_DIGITS) return true;
  for (let i = start; i < end; i++) if (text[i] === 'e' || text[i] === 'E') return true;
  return false;
}

function isExact(token: string): boolean {
  const n = Number(token);
  return Number.isFinite(n) && sameDecimal(token, String(n));
}

function numberEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && /[0-9eE.+-]/.test(text[i]!)) i++;
  return i;
}

function decodeKey(text: string, start: number, end: number): string {
  try {
    return JSON.parse(text.slice(start, end + 1)) as string;
  } catch {
    return text.slice(start + 1, end); // not valid JSON: JSON.parse will say so
  }
}

/** The index of the quote that closes the string opening at `start`, and whether the string has escapes. */
function stringEnd(text: string, start: number): { end: number; escaped: boolean } {
  let escaped = false;
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      escaped = true;
      i++;
    } else if (c === QUOTE) return { end: i, escaped };
  }
  return { end: text.length - 1, escaped };
}
