import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACH_TEXT, achField, achText } from '../../shared/domain/ach-text.js';

describe('ACH text', () => {
  it.each([
    ['Søren Kierkegaard', 'SOREN KIERKEGAARD'],
    ['Łukasz Żółć', 'LUKASZ ZOLC'],
    ['Æsa Ødegård', 'AESA ODEGARD'],
    ['Œdipe Straße', 'OEDIPE STRASSE'],
    ['Đorđe Þórsson', 'DORDE THORSSON'],
    ['Zoë   Müller', 'ZOE MULLER'], // marks stripped, never the German ue
    ['Ångström-Ñúñez', 'ANGSTROM-NUNEZ'],
    ["José O'Brien-Smith", "JOSE O'BRIEN-SMITH"],
    ['Wu, Mei & Chen/Li.', 'WU, MEI & CHEN/LI.'],
    ['Ｔｏｍ 李 Smith', 'TOM SMITH'], // full-width letters fold; an ideograph has no Latin spelling and is dropped
    ['anne_marie (annie) 😀 smith', 'ANNE MARIE ANNIE SMITH'],
    ['ﬁnn', 'FINN'],
    ['李小龙', ''],
  ])('spells %j as %j', (name, ach) => {
    expect(achText(name)).toBe(ach);
  });

  it('cuts to the field and fills it with spaces, and falls back when nothing is left', () => {
    expect(achField('Anne-Marie Smith-Johnson III', 22)).toBe('ANNE-MARIE SMITH-JOHNS');
    expect(achField('Ab  Cd', 3)).toBe('AB ');
    expect(achField('李小龙', 22, 'emp_01abc')).toBe('EMP 01ABC'.padEnd(22, ' '));
    expect(achField('', 5)).toBe('     ');
  });

  it('always yields ACH characters of exactly the field width, for any text at all', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.integer({ min: 1, max: 40 }), (value, width) => {
        const field = achField(value, width);
        expect(field).toHaveLength(width);
        expect(field).toMatch(ACH_TEXT);
        expect(field.startsWith(' ') && field.trim() !== '').toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps every Latin letter a letter: text of Latin letters with marks never loses a character', () => {
    const latin = fc.constantFrom(
      ...'aáàâäãåāăąæçćčďđéèêëēėęěğģíìîïīįıķĺļľłñńņňóòôöõøōőœŕřśşšßţťþúùûüūůűųýÿźżž'.split(''),
    );
    fc.assert(
      fc.property(fc.array(latin, { minLength: 1, maxLength: 30 }), (letters) => {
        const text = achText(letters.join(''));
        expect(text).toMatch(/^[A-Z]+$/);
        expect(text.length).toBeGreaterThanOrEqual(letters.length);
      }),
      { numRuns: 500 },
    );
  });
});
