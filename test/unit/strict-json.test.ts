import { describe, expect, it } from 'vitest';
import { InexactNumber, parseStrictJson } from '../../shared/domain/strict-json.js';

/** Request bodies as the client wrote them (CONTRACT §1, §5): no key twice, no number silently rounded. */
describe('strict request JSON', () => {
  it.each([
    ['{"gross_pay":"1000","gross_pay":"999999"}', 'gross_pay', ''],
    // The same value twice is still the same key twice: refused, not quietly accepted.
    ['{"a":1,"a":1}', 'a', ''],
    // Keys are compared decoded: "\\u0061" is "a".
    ['{"a":1,"\\u0061":2}', 'a', ''],
    [
      '{"employees":[{"employee_id":"e1"},{"employee_id":"e2","gross_pay":1,"gross_pay":2}]}',
      'gross_pay',
      'employees[1]',
    ],
    ['{"x":{"y":{"z":1,"z":2}}}', 'z', 'x.y'],
  ])('refuses %s naming the key %j at %j', (text, key, path) => {
    expect(parseStrictJson(text)).toEqual({ ok: false, problem: 'duplicate_key', key, path });
  });

  it('accepts the same key in different objects, and keys that only look alike', () => {
    const reading = parseStrictJson('{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":2}],"k":"\\"k\\"","K":0}');
    expect(reading).toEqual({
      ok: true,
      value: { a: { k: 1 }, b: { k: 1 }, c: [{ k: 1 }, { k: 2 }], k: '"k"', K: 0 },
    });
  });

  it('keeps a number a double cannot hold exactly as its text, and every other number as a number', () => {
    const reading = parseStrictJson(
      '{"a":1000.00000000000001,"b":10.50,"c":1e2,"d":0.1,"e":-0.0,"f":12345678901234567890}',
    );
    expect(reading.ok).toBe(true);
    const value = (reading as { value: Record<string, unknown> }).value;
    expect(value.a).toEqual(new InexactNumber('1000.00000000000001'));
    expect(value.b).toBe(10.5);
    expect(value.c).toBe(100);
    expect(value.d).toBe(0.1);
    expect(value.e).toBe(-0);
    expect(value.f).toEqual(new InexactNumber('12345678901234567890'));
  });

  it('does not let "__proto__" reach the prototype', () => {
    const reading = parseStrictJson('{"__proto__":{"admin":true}}') as { ok: true; value: Record<string, unknown> };
    expect(Object.getPrototypeOf(reading.value)).toBe(Object.prototype);
    expect((reading.value as { admin?: boolean }).admin).toBeUndefined();
  });

  it('refuses a body nested past 64 levels before parsing it, in memory that does not grow with the body', () => {
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
    expect(parseStrictJson(deep)).toMatchObject({ ok: false, problem: 'too_deep' });
    const inexactDeep = `{"a":${'['.repeat(20_000)}1.00000000000000001${']'.repeat(20_000)}}`;
    expect(parseStrictJson(inexactDeep)).toMatchObject({ ok: false, problem: 'too_deep' });
    const nested = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    expect(parseStrictJson(nested(64)).ok).toBe(true);
    expect(parseStrictJson(nested(65))).toMatchObject({ ok: false, problem: 'too_deep' });
  });

  it('keeps a short number with an exponent a double cannot hold as its text (1e-400 is not 0)', () => {
    const reading = parseStrictJson('{"a":1e-400,"b":-1e-400,"c":1e2}') as { ok: true; value: Record<string, unknown> };
    expect(reading.value.a).toEqual(new InexactNumber('1e-400'));
    expect(reading.value.b).toEqual(new InexactNumber('-1e-400'));
    expect(reading.value.c).toBe(100);
  });

  it('reports text that is not JSON as a syntax problem', () => {
    for (const text of ['{', '{"a":1,}', "{'a':1}", '{"a":01}', 'NaN']) {
      expect(parseStrictJson(text)).toMatchObject({ ok: false, problem: 'syntax' });
    }
  });
});
