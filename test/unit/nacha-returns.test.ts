import { describe, expect, it } from 'vitest';
import { parseReturnFile, writeReturnFile } from '../../shared/adapters/nacha-returns.js';
import { InvalidRequestError } from '../../shared/domain/errors.js';
import { parseCorrectedData, RETURN_REASONS } from '../../shared/domain/returns.js';
import { readBankReport } from '../../shared/use-cases/disbursement-returns.js';
import { bankReturnFile, corruptLine } from '../support/bank-return-file.js';

/**
 * The reader of a bank's return / notification-of-change file, against files written by the tests' own writer
 * (test/support/bank-return-file.ts), and against each way a file can be broken: all of it is checked first.
 */

const OPTIONS = {
  odfiRouting: '021000021',
  rdfiRouting: '011000015',
  companyName: 'ACME PAYROLL',
  companyIdentification: '1234567890',
  createdAt: new Date('2026-11-24T14:05:00Z'),
};
const TRACE_A = '021000020000007';
const TRACE_B = '021000020000008';
const TRACE_C = '021000020000009';

const FILE = bankReturnFile(OPTIONS, {
  returns: [
    { originalTrace: TRACE_A, code: 'R03', amountCents: 125_000, routing: '011000015', account: '12345678' },
    {
      originalTrace: TRACE_B,
      code: 'R16',
      amountCents: 99,
      routing: '011000015',
      account: '87654321',
      accountType: 'savings',
    },
  ],
  corrections: [
    {
      originalTrace: TRACE_C,
      code: 'C03',
      routing: '011000015',
      account: '1111',
      corrected: { routing: '021000021', account: '99998888' },
    },
    {
      originalTrace: TRACE_A,
      code: 'C06',
      routing: '011000015',
      account: '1111',
      corrected: { account: '4444', accountType: 'savings' },
    },
    {
      originalTrace: TRACE_B,
      code: 'C07',
      routing: '011000015',
      account: '1111',
      corrected: { routing: '021000021', account: '55556666', accountType: 'checking' },
    },
  ],
});

const problemsOf = (text: string) => {
  const reading = parseReturnFile(text);
  if (reading.ok) throw new Error('expected the file to be refused');
  return reading.problems;
};

describe('reading a return / NOC file', () => {
  it('reads every return and correction of a well-formed file, in order, with its line', () => {
    const reading = parseReturnFile(FILE);
    expect(reading).toEqual({
      ok: true,
      items: [
        {
          type: 'return',
          trace_number: TRACE_A,
          code: 'R03',
          line: 4,
          company_identification: '1234567890',
          amount_cents: 125_000,
        },
        {
          type: 'return',
          trace_number: TRACE_B,
          code: 'R16',
          line: 6,
          company_identification: '1234567890',
          amount_cents: 99,
        },
        {
          type: 'correction',
          trace_number: TRACE_C,
          code: 'C03',
          corrected: { routing_number: '021000021', account_number: '99998888' },
          line: 10,
          company_identification: '1234567890',
        },
        {
          type: 'correction',
          trace_number: TRACE_A,
          code: 'C06',
          corrected: { account_number: '4444', account_type: 'savings' },
          line: 12,
          company_identification: '1234567890',
        },
        {
          type: 'correction',
          trace_number: TRACE_B,
          code: 'C07',
          corrected: { routing_number: '021000021', account_number: '55556666', account_type: 'checking' },
          line: 14,
          company_identification: '1234567890',
        },
      ],
    });
  });

  it('takes CRLF line ends and a trailing newline, as files downloaded from a bank portal have', () => {
    expect(parseReturnFile(`${FILE.replaceAll('\n', '\r\n')}\r\n`).ok).toBe(true);
  });

  it.each([
    ['a long record', 3, (l: string) => `${l}XX`, /94 characters; this one is 96/],
    [
      'a dishonored return',
      4,
      (l: string) => `${l.slice(0, 3)}R69${l.slice(6)}`,
      /R69.*dishonored or contested returns \(R61-R77\) are settled with your bank: post the file without that entry/,
    ],
    [
      'a contested dishonored return',
      4,
      (l: string) => `${l.slice(0, 3)}R71${l.slice(6)}`,
      /R71.*dishonored or contested returns \(R61-R77\) are settled with your bank: post the file without that entry/,
    ],
    [
      'an unknown return code',
      4,
      (l: string) => `${l.slice(0, 3)}R48${l.slice(6)}`,
      /"R48" is not a return reason code/,
    ],
    ['an addenda type 98 in a return batch', 4, (l: string) => `798${l.slice(3)}`, /addenda type is 99/],
    [
      'an original trace that is not digits',
      4,
      (l: string) => `${l.slice(0, 6)}02100002000000X${l.slice(21)}`,
      /not 15 digits/,
    ],
    [
      'an addenda trace that is not its entry',
      4,
      (l: string) => `${l.slice(0, 79)}011000019999999`,
      /not its entry's trace/,
    ],
    [
      'an entry without its addenda indicator',
      3,
      (l: string) => `${l.slice(0, 78)}0${l.slice(79)}`,
      /addenda indicator 1/,
    ],
    [
      'a wrong entry count in the batch control',
      7,
      (l: string) => `${l.slice(0, 4)}000005${l.slice(10)}`,
      /count is 5; the batch adds up to 4/,
    ],
    [
      'a wrong total credit in the batch control',
      7,
      (l: string) => `${l.slice(0, 32)}000000000001${l.slice(44)}`,
      /total credit is 1/,
    ],
    ['a change code the rules do not have', 10, (l: string) => `${l.slice(0, 3)}C42${l.slice(6)}`, /not a change code/],
    ['an unknown record type', 2, (l: string) => `4${l.slice(1)}`, /"4" is not a NACHA record type/],
  ])('refuses %s, naming its line', (_, line, mutate, message) => {
    const problems = problemsOf(corruptLine(FILE, line, mutate));
    expect(problems.map((p) => p.line)).toContain(line);
    expect(problems.find((p) => p.line === line)!.message).toMatch(message);
  });

  it('refuses a file cut short, an empty file, and records after the file control', () => {
    const lines = FILE.split('\n');
    expect(problemsOf(lines.slice(0, 7).join('\n'))).toEqual([
      { line: 7, message: 'The file has no file control record' },
    ]);
    expect(problemsOf('')).toEqual([{ line: 1, message: 'The file is empty' }]);
    const fileControl = lines.findIndex((l) => l.startsWith('9') && l !== '9'.repeat(94));
    const extra = [...lines.slice(0, fileControl + 1), lines[1]!].join('\n');
    expect(problemsOf(extra)).toEqual([
      { line: fileControl + 2, message: 'Only filler records (all 9s) may follow the file control record' },
    ]);
  });

  it('reads what transit does to a file: a byte-order mark, trimmed trailing blanks, blank lines, no line breaks', () => {
    const items = (parseReturnFile(FILE) as { items: unknown[] }).items;
    const lines = FILE.split('\n');
    expect(parseReturnFile(`\uFEFF${FILE}`)).toEqual({ ok: true, items });
    expect(parseReturnFile(lines.map((l) => l.trimEnd()).join('\n'))).toEqual({ ok: true, items });
    const spaced = parseReturnFile(lines.join('\n\n'));
    expect(spaced.ok && spaced.items.map((i) => i.trace_number)).toEqual(
      items.map((i) => (i as { trace_number: string }).trace_number),
    );
    const unbroken = parseReturnFile(lines.join(''));
    expect(unbroken.ok && unbroken.items.length).toBe(items.length);
  });

  it('refuses several files sent as one: a file has one file header, and only filler follows its file control', () => {
    const lines = FILE.split('\n').length;
    expect(problemsOf(`${FILE}\n${FILE}`)).toContainEqual({
      line: lines + 1,
      message: 'A file header record (type 1) may only open the file: post one file at a time',
    });
  });

  it('records corrected data it cannot apply (a routing number that fails its check) instead of refusing the file', () => {
    const bad = corruptLine(FILE, 10, (l) => `${l.slice(0, 35)}021000022${l.slice(44)}`);
    const reading = parseReturnFile(bad);
    expect(reading.ok).toBe(true);
    expect(reading.ok && reading.items[2]).toMatchObject({
      type: 'correction',
      code: 'C03',
      corrected: {},
      unusable: expect.stringContaining('"021000022" is not valid'),
    });
  });

  it('reads back the file the sandbox writes for its simulated returns', () => {
    const file = writeReturnFile('021000021', '011000015', '1234567890', new Date('2026-11-24T14:05:00Z'), [
      {
        originalTrace: TRACE_A,
        code: 'R03',
        amountCents: 258_950,
        routingNumber: '011000015',
        accountLast4: '6789',
        accountType: 'savings',
        individualId: 'EMP01',
      },
    ]);
    expect(file.split('\n').every((l) => l.length === 94)).toBe(true);
    expect(parseReturnFile(file)).toEqual({
      ok: true,
      items: [
        {
          type: 'return',
          trace_number: TRACE_A,
          code: 'R03',
          line: 4,
          company_identification: '1234567890',
          amount_cents: 258_950,
        },
      ],
    });
  });
});

describe('a pathological body', () => {
  const moreLine = (problems: { message: string }[]) => {
    const match = /^(\d+) more problems, from this line on, are not listed(?:; reading stopped at line (\d+))?/.exec(
      problems.at(-1)!.message,
    );
    if (!match) throw new Error(`no "more" line: ${problems.at(-1)!.message}`);
    return { more: Number(match[1]), stoppedAt: match[2] === undefined ? undefined : Number(match[2]) };
  };

  it('refuses 1 MB of batch headers after about 1,000 problems, keeping only what it lists', () => {
    const problems = problemsOf('5\n'.repeat(500_000));
    expect(problems.length).toBeLessThanOrEqual(51);
    expect(problems).toHaveLength(51);
    const { more, stoppedAt } = moreLine(problems);
    // Read up to ~1,000 problems, not the millions the whole body holds.
    expect(50 + more).toBeGreaterThanOrEqual(1_000);
    expect(50 + more).toBeLessThan(1_050);
    expect(stoppedAt).toBeLessThan(200);
  });

  it('lists the first 50 problems in line order and counts the rest, when it reads the whole file', () => {
    // Line 1: no file header, and "X" is no record type; lines 2-70: no record type; then no file control.
    const problems = problemsOf('X\n'.repeat(70));
    expect(problems).toHaveLength(51);
    expect(problems.slice(0, 50).map((p) => p.line)).toEqual([1, 1, ...Array.from({ length: 48 }, (_, i) => i + 2)]);
    expect(problems[50]).toEqual({ line: 50, message: '22 more problems, from this line on, are not listed' });
  });
});

describe('the size of a report', () => {
  it('refuses a file of more than 2,000 items before applying any of it, and takes 2,000', () => {
    const returns = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        originalTrace: `02100002${String(i + 1).padStart(7, '0')}`,
        code: 'R01',
        amountCents: 100,
        routing: '011000015',
        account: '12345678',
      }));
    expect(readBankReport(bankReturnFile(OPTIONS, { returns: returns(2_000) }))).toHaveLength(2_000);
    expect(() => readBankReport(bankReturnFile(OPTIONS, { returns: returns(2_001) }))).toThrow(InvalidRequestError);
  });
});

describe('corrected data and reasons', () => {
  it.each([
    ['C01', '12345678', { account_number: '12345678' }],
    ['C02', '021000021', { routing_number: '021000021' }],
    ['C03', '021000021   12345678', { routing_number: '021000021', account_number: '12345678' }],
    ['C05', '32', { account_type: 'savings' }],
    ['C06', '12345678            22', { account_number: '12345678', account_type: 'checking' }],
    // Positions 27-28, as the rules lay it out; right-aligned in the field, as some banks' software writes it.
    [
      'C07',
      `021000021${'12345678'.padEnd(17)}32`,
      { routing_number: '021000021', account_number: '12345678', account_type: 'savings' },
    ],
    [
      'C07',
      '02100002112345678          32',
      { routing_number: '021000021', account_number: '12345678', account_type: 'savings' },
    ],
    [
      'C07',
      '0210000211234567890123456722',
      { routing_number: '021000021', account_number: '12345678901234567', account_type: 'checking' },
    ],
    ['C09', 'ANYTHING', {}],
  ])('reads %s %j', (code, data, expected) => {
    expect(parseCorrectedData(code, data.padEnd(29, ' '))).toEqual(expected);
  });

  it.each([
    ['C01', '12AB', /4 to 17 digits/],
    ['C05', '99', /not a checking or savings code/],
    ['C03', '021000021', /4 to 17 digits/],
  ])('refuses %s %j', (code, data, message) => {
    expect(parseCorrectedData(code, data.padEnd(29, ' '))).toMatch(message);
  });

  it('names at least the reasons the contract lists', () => {
    expect(Object.keys(RETURN_REASONS)).toEqual(
      expect.arrayContaining(['R01', 'R02', 'R03', 'R04', 'R16', 'R20', 'R29']),
    );
    expect(RETURN_REASONS.R01).toBe('Insufficient funds');
    expect(RETURN_REASONS.R02).toBe('Account closed');
    expect(RETURN_REASONS.R04).toBe('Invalid account number structure');
  });
});
