import { describe, expect, it } from 'vitest';
import { parseReturnFile, type ReturnFileProblem, writeReturnFile } from '../../shared/adapters/nacha-returns.js';
import { bankReturnFile, corruptLine } from '../support/bank-return-file.js';

/*
 * A corpus of broken return files, each derived from one valid file by one change: the files an outside review
 * found applied (a header that is just "1", a batch header cut at column 54, a batch control missing its company
 * identification and batch number or disagreeing with its header, a block count "XXXXXX", a file control cut
 * short) and their neighbours. Each must be refused with a problem on the line that is wrong; the valid file, and
 * the same file with only trailing blanks lost in transit, must still be read.
 */

const TRACE_A = '021000020000007';
const TRACE_B = '021000020000008';
const TRACE_C = '021000020000009';

// 1 file header, 2 PPD batch header, 3-6 two returns (entry + addenda 99), 7 batch control, 8 COR batch header,
// 9-10 one correction (entry + addenda 98), 11 batch control, 12 file control, 13-20 filler.
const OPTIONS = {
  odfiRouting: '021000021',
  rdfiRouting: '011000015',
  companyName: 'ACME PAYROLL',
  companyIdentification: '1234567890',
  createdAt: new Date('2026-11-24T14:05:00Z'),
};
const BASE = bankReturnFile(OPTIONS, {
  returns: [
    { originalTrace: TRACE_A, code: 'R03', amountCents: 125_000, routing: '011000015', account: '12345678' },
    { originalTrace: TRACE_B, code: 'R01', amountCents: 4_321, routing: '011000015', account: '87654321' },
  ],
  corrections: [
    {
      originalTrace: TRACE_C,
      code: 'C01',
      routing: '011000015',
      account: '1111',
      corrected: { account: '22223333' },
    },
  ],
});
const LINES = BASE.split('\n');
const FILE_HEADER = 1;
const BATCH_HEADER = 2;
const RETURN_ENTRY = 3;
const RETURN_ADDENDA = 4;
const BATCH_CONTROL = 7;
const COR_BATCH_HEADER = 8;
const COR_ENTRY = 9;
const FILE_CONTROL = 12;
const FILLER = 13;

/** The line with `text` at positions `from`..(from + text.length - 1), 1-based as the NACHA layouts print them. */
const put = (from: number, text: string) => (line: string) =>
  `${line.slice(0, from - 1)}${text}${line.slice(from - 1 + text.length)}`;

/** The file as transit may leave it: every line without its trailing blanks. */
const trimmed = (file: string) =>
  file
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');

const problemsOf = (file: string): ReturnFileProblem[] => {
  const reading = parseReturnFile(file);
  if (reading.ok) throw new Error('expected the file to be refused');
  return reading.problems;
};

const itemsOf = (file: string) => {
  const reading = parseReturnFile(file);
  if (!reading.ok) throw new Error(JSON.stringify(reading.problems));
  return reading.items;
};

describe('the corpus base', () => {
  it('is laid out as the cases below assume, and is read', () => {
    expect(LINES.map((l) => l[0]).join('')).toBe(`15676785678${'9'.repeat(9)}`);
    expect(LINES.every((l) => l.length === 94)).toBe(true);
    expect(parseReturnFile(BASE).ok).toBe(true);
  });

  it('gives each return the amount of its entry, in cents, and a correction none', () => {
    const reading = parseReturnFile(BASE);
    expect(reading.ok && reading.items.map((i) => [i.type, i.trace_number, i.amount_cents])).toEqual([
      ['return', TRACE_A, 125_000],
      ['return', TRACE_B, 4_321],
      ['correction', TRACE_C, undefined],
    ]);
  });

  it("reads addenda whose original receiving DFI is not their entry's, as in every return", () => {
    // The return goes to the original entry's ODFI (entry, 4-11); the addenda names the original RDFI (28-35), the
    // bank sending the return. They are different banks, so the two fields are not compared.
    expect(LINES[RETURN_ENTRY - 1]!.slice(3, 11)).toBe('02100002');
    expect(LINES[RETURN_ADDENDA - 1]!.slice(27, 35)).toBe('01100001');
    expect(parseReturnFile(BASE).ok).toBe(true);
  });

  it("reads the sandbox bank's file, with its amount", () => {
    const file = writeReturnFile('021000021', '011000015', '1234567890', new Date('2026-11-24T14:05:00Z'), [
      {
        originalTrace: TRACE_A,
        code: 'R03',
        amountCents: 258_950,
        routingNumber: '011000015',
        accountLast4: '6789',
        accountType: 'checking',
        individualId: 'EMP01',
      },
    ]);
    const reading = parseReturnFile(file);
    expect(reading.ok && reading.items).toEqual([
      expect.objectContaining({ trace_number: TRACE_A, amount_cents: 258_950 }),
    ]);
    expect(parseReturnFile(trimmed(file)).ok).toBe(true);
  });
});

describe('records that only lost trailing blanks', () => {
  const items = itemsOf(BASE);

  it('reads every line trimmed', () => {
    expect(itemsOf(trimmed(BASE))).toEqual(items);
  });

  it('reads a file header whose immediate origin name and reference code are blank, trimmed', () => {
    const header = put(41, 'FEDERAL RESERVE BANK')(LINES[0]!).trimEnd();
    expect(header).toHaveLength(60);
    expect(itemsOf(corruptLine(BASE, FILE_HEADER, () => header))).toEqual(items);
  });

  it('reads a file header with no creation time, and a file control trimmed to its totals', () => {
    expect(itemsOf(corruptLine(BASE, FILE_HEADER, put(30, '    ')))).toEqual(items);
    expect(itemsOf(corruptLine(BASE, FILE_CONTROL, (l) => l.slice(0, 55)))).toEqual(items);
  });
});

type Mutation = (file: string) => string;
const onLine =
  (line: number, mutate: (line: string) => string): Mutation =>
  (file) =>
    corruptLine(file, line, mutate);
const withoutLine =
  (line: number): Mutation =>
  (file) =>
    file
      .split('\n')
      .filter((_, i) => i !== line - 1)
      .join('\n');
const insertedBefore =
  (line: number, record: string): Mutation =>
  (file) => {
    const lines = file.split('\n');
    lines.splice(line - 1, 0, record);
    return lines.join('\n');
  };

/** [case, mutation, the line the problem must be on, what the problem must say]. */
const MALFORMED: [string, Mutation, number, RegExp][] = [
  // The review's findings.
  [
    'a file header that is just "1"',
    onLine(FILE_HEADER, () => '1'),
    FILE_HEADER,
    /priority code \(positions 2-3\) is missing/,
  ],
  ['a file header that is just "1" (why)', onLine(FILE_HEADER, () => '1'), FILE_HEADER, /record is 1 character:/],
  [
    'a batch header cut at column 54',
    onLine(BATCH_HEADER, (l) => l.slice(0, 54)),
    BATCH_HEADER,
    /effective entry date \(positions 70-75\) is missing/,
  ],
  [
    'a batch header cut at column 53',
    onLine(BATCH_HEADER, (l) => l.slice(0, 53)),
    BATCH_HEADER,
    /company entry description \(positions 54-63\) is missing/,
  ],
  [
    'a batch control with a blank company identification',
    onLine(BATCH_CONTROL, put(45, ' '.repeat(10))),
    BATCH_CONTROL,
    /batch control's company identification \(positions 45-54\) is missing/,
  ],
  [
    'a batch control with a blank batch number',
    onLine(BATCH_CONTROL, put(88, ' '.repeat(7))),
    BATCH_CONTROL,
    /batch control's batch number \(positions 88-94\) is missing/,
  ],
  [
    'a batch control cut before its company identification',
    onLine(BATCH_CONTROL, (l) => l.slice(0, 44)),
    BATCH_CONTROL,
    /batch control's company identification .* is missing/,
  ],
  [
    "a batch control whose company identification is not its header's",
    onLine(BATCH_CONTROL, put(45, '9999999999')),
    BATCH_CONTROL,
    /company identification "9999999999" is not its batch header's "1234567890" \(line 2\)/,
  ],
  [
    "a batch control whose batch number is not its header's",
    onLine(BATCH_CONTROL, put(88, '0000002')),
    BATCH_CONTROL,
    /batch number "0000002" is not its batch header's "0000001"/,
  ],
  [
    "a batch control whose service class is not its header's",
    onLine(BATCH_CONTROL, put(2, '200')),
    BATCH_CONTROL,
    /service class code "200" is not its batch header's "220"/,
  ],
  [
    "a batch control whose originating DFI is not its header's",
    onLine(BATCH_CONTROL, put(80, '02100002')),
    BATCH_CONTROL,
    /originating DFI identification "02100002" is not its batch header's "01100001"/,
  ],
  [
    'a block count "XXXXXX"',
    onLine(FILE_CONTROL, put(8, 'XXXXXX')),
    FILE_CONTROL,
    /block count \(positions 8-13\) "XXXXXX" is not 6 digits/,
  ],
  [
    'a block count that is not the blocks',
    onLine(FILE_CONTROL, put(8, '000003')),
    FILE_CONTROL,
    /block count is 3; the file's 20 records make 2 blocks/,
  ],
  [
    'a file control cut short',
    onLine(FILE_CONTROL, (l) => l.slice(0, 40)),
    FILE_CONTROL,
    /file control's total credit \(positions 44-55\) is missing/,
  ],
  [
    'a file control cut short (why)',
    onLine(FILE_CONTROL, (l) => l.slice(0, 40)),
    FILE_CONTROL,
    /record is 40 characters/,
  ],
  // Counts, hashes and totals.
  [
    'a wrong batch entry hash',
    onLine(BATCH_CONTROL, put(11, '0000000001')),
    BATCH_CONTROL,
    /batch control's entry hash is 1;/,
  ],
  [
    'a wrong file entry hash',
    onLine(FILE_CONTROL, put(22, '0000000001')),
    FILE_CONTROL,
    /file control's entry hash is 1;/,
  ],
  [
    'a wrong batch total credit',
    onLine(BATCH_CONTROL, put(33, '000000000001')),
    BATCH_CONTROL,
    /batch control's total credit is 1; the batch adds up to 129321/,
  ],
  [
    'a wrong batch total debit',
    onLine(BATCH_CONTROL, put(21, '000000000001')),
    BATCH_CONTROL,
    /total debit is 1; the batch adds up to 0/,
  ],
  [
    'a wrong file total credit',
    onLine(FILE_CONTROL, put(44, '000000000001')),
    FILE_CONTROL,
    /file control's total credit is 1; the file adds up to 129321/,
  ],
  [
    'a wrong batch entry/addenda count',
    onLine(BATCH_CONTROL, put(5, '000003')),
    BATCH_CONTROL,
    /entry\/addenda count is 3; the batch adds up to 4/,
  ],
  [
    'a wrong file entry/addenda count',
    onLine(FILE_CONTROL, put(14, '00000005')),
    FILE_CONTROL,
    /entry\/addenda count is 5; the file adds up to 6/,
  ],
  ['a wrong batch count', onLine(FILE_CONTROL, put(2, '000001')), FILE_CONTROL, /counts 1 batches; the file has 2/],
  [
    'a batch total that is not digits',
    onLine(BATCH_CONTROL, put(33, '00000012500A')),
    BATCH_CONTROL,
    /total credit .* is not 12 digits/,
  ],
  // Record lengths and order.
  ['a record of 95 characters', onLine(RETURN_ENTRY, (l) => `${l}X`), RETURN_ENTRY, /94 characters; this one is 95/],
  ['a missing file control', withoutLine(FILE_CONTROL), FILE_CONTROL, /no file control record/],
  [
    'a file that ends at its last batch control',
    (f) => f.split('\n').slice(0, 11).join('\n'),
    11,
    /no file control record/,
  ],
  [
    'a second file header in the middle',
    insertedBefore(COR_BATCH_HEADER, LINES[0]!),
    COR_BATCH_HEADER,
    /file header record \(type 1\) may only open the file/,
  ],
  ['a file that does not open with its header', withoutLine(FILE_HEADER), 1, /must open with a file header/],
  ['a record after the file control', insertedBefore(FILE_CONTROL + 1, LINES[1]!), FILE_CONTROL + 1, /Only filler/],
  ['an entry without its addenda', withoutLine(RETURN_ADDENDA), RETURN_ENTRY, /followed by its addenda record/],
  [
    'a batch header in a batch',
    insertedBefore(RETURN_ENTRY, LINES[1]!),
    RETURN_ENTRY,
    /must follow the file header or a batch control/,
  ],
  // Fields.
  [
    'an addenda 99 whose original trace is not digits',
    onLine(RETURN_ADDENDA, put(7, '02100002000000X')),
    RETURN_ADDENDA,
    /original entry trace number \(positions 7-21\) "02100002000000X" is not 15 digits/,
  ],
  [
    'an addenda 99 without its original RDFI',
    onLine(RETURN_ADDENDA, put(28, ' '.repeat(8))),
    RETURN_ADDENDA,
    /original receiving DFI identification .* is missing/,
  ],
  [
    'a date of death that is no date',
    onLine(RETURN_ADDENDA, put(22, '261341')),
    RETURN_ADDENDA,
    /date of death .* "261341" is not a date/,
  ],
  [
    'a file creation date that is no date',
    onLine(FILE_HEADER, put(24, '261131')),
    FILE_HEADER,
    /file creation date .* is not a date/,
  ],
  [
    'a file creation time that is no time',
    onLine(FILE_HEADER, put(30, '2460')),
    FILE_HEADER,
    /file creation time .* is not a time/,
  ],
  ['a priority code other than 01', onLine(FILE_HEADER, put(2, '02')), FILE_HEADER, /priority code .* is not "01"/],
  [
    'an immediate destination that is not a routing number',
    onLine(FILE_HEADER, put(4, ' 02100002X')),
    FILE_HEADER,
    /immediate destination/,
  ],
  [
    'a blank immediate origin',
    onLine(FILE_HEADER, put(14, ' '.repeat(10))),
    FILE_HEADER,
    /immediate origin \(positions 14-23\) is missing/,
  ],
  ['a lower-case file ID modifier', onLine(FILE_HEADER, put(34, 'a')), FILE_HEADER, /file ID modifier/],
  ['a record size other than 094', onLine(FILE_HEADER, put(35, '095')), FILE_HEADER, /record size .* is not "094"/],
  ['a blocking factor other than 10', onLine(FILE_HEADER, put(38, '20')), FILE_HEADER, /blocking factor/],
  ['a format code other than 1', onLine(FILE_HEADER, put(40, '2')), FILE_HEADER, /format code/],
  [
    'a service class the rules do not have',
    onLine(BATCH_HEADER, put(2, '221')),
    BATCH_HEADER,
    /service class code .* "221"/,
  ],
  ['a blank company name', onLine(BATCH_HEADER, put(5, ' '.repeat(16))), BATCH_HEADER, /company name .* is missing/],
  [
    'an effective entry date that is no date',
    onLine(BATCH_HEADER, put(70, '261301')),
    BATCH_HEADER,
    /effective entry date .* is not a date/,
  ],
  [
    'an originator status code the rules do not have',
    onLine(BATCH_HEADER, put(79, '7')),
    BATCH_HEADER,
    /originator status code/,
  ],
  [
    'a batch number that is not digits',
    onLine(BATCH_HEADER, put(88, '000000A')),
    BATCH_HEADER,
    /batch number .* is not 7 digits/,
  ],
  [
    'batch numbers that do not ascend',
    onLine(COR_BATCH_HEADER, put(88, '0000001')),
    COR_BATCH_HEADER,
    /batch numbers ascend/,
  ],
  [
    'an entry amount that is not digits',
    onLine(RETURN_ENTRY, put(30, '00001250O0')),
    RETURN_ENTRY,
    /amount .* is not 10 digits/,
  ],
  ['an entry with a wrong check digit', onLine(RETURN_ENTRY, put(12, '2')), RETURN_ENTRY, /check digit 2 is not/],
  [
    'an entry with no account number',
    onLine(RETURN_ENTRY, put(13, ' '.repeat(17))),
    RETURN_ENTRY,
    /DFI account number .* is missing/,
  ],
  [
    'a transaction code the rules do not have',
    onLine(RETURN_ENTRY, put(2, '25')),
    RETURN_ENTRY,
    /transaction code .* "25"/,
  ],
  ['a debit in a credits-only batch', onLine(RETURN_ENTRY, put(2, '26')), RETURN_ENTRY, /credits-only batch/],
  [
    "a trace number that is not the batch's originator's",
    onLine(RETURN_ENTRY, put(80, '02100002')),
    RETURN_ENTRY,
    /does not begin with/,
  ],
  [
    'a notification of change that carries an amount',
    onLine(COR_ENTRY, put(30, '0000000100')),
    COR_ENTRY,
    /carries no amount/,
  ],
  ['a character that is not ASCII', onLine(RETURN_ENTRY, put(55, 'É')), RETURN_ENTRY, /not printable ASCII/],
  // What a return file does not carry.
  [
    'a live credit (22) as a return',
    onLine(RETURN_ENTRY, put(2, '22')),
    RETURN_ENTRY,
    /transaction code \(positions 2-3\) "22" is not a "return or NOC" transaction code \(21, 26, 31, 36, 41, 46, 51 or 56\)/,
  ],
  ['a prenote (23) as a return', onLine(RETURN_ENTRY, put(2, '23')), RETURN_ENTRY, /"23" is not a "return or NOC"/],
  ['a live savings credit (32) as a NOC', onLine(COR_ENTRY, put(2, '32')), COR_ENTRY, /"32" is not a "return or NOC"/],
  [
    'a made-up standard entry class',
    onLine(BATCH_HEADER, put(51, 'XYZ')),
    BATCH_HEADER,
    /standard entry class code \(positions 51-53\) "XYZ" is not "PPD" or "CCD" or "COR"/,
  ],
  ['a WEB batch', onLine(BATCH_HEADER, put(51, 'WEB')), BATCH_HEADER, /standard entry class code .* "WEB" is not/],
  [
    'an R15 whose date of death is 000000',
    (f) => onLine(RETURN_ADDENDA, (l) => put(22, '000000')(put(4, 'R15')(l)))(f),
    RETURN_ADDENDA,
    /R15 return's date of death \(positions 22-27\) .* not 000000/,
  ],
];

describe('the malformed corpus', () => {
  it.each(MALFORMED)('refuses %s, naming its line', (_, mutate, line, message) => {
    const problems = problemsOf(mutate(BASE));
    expect(problems.filter((p) => p.line === line).map((p) => p.message)).toContainEqual(
      expect.stringMatching(message),
    );
  });

  it('lists every problem of a file, not only the first', () => {
    const broken = [
      onLine(FILE_HEADER, () => '1'),
      onLine(BATCH_CONTROL, put(45, ' '.repeat(10))),
      onLine(FILE_CONTROL, put(8, 'XXXXXX')),
    ].reduce((file, mutate) => mutate(file), BASE);
    const lines = new Set(problemsOf(broken).map((p) => p.line));
    expect([...lines]).toEqual([FILE_HEADER, BATCH_CONTROL, FILE_CONTROL]);
  });

  it('refuses a file with no batches', () => {
    const empty = bankReturnFile(OPTIONS, {});
    expect(
      empty
        .split('\n')
        .map((l) => l[0])
        .join(''),
    ).toBe(`19${'9'.repeat(8)}`);
    expect(problemsOf(empty)).toEqual([{ line: 2, message: 'A return file carries at least one batch' }]);
  });

  it('refuses what the review found in the form it was posted: a file of one short record', () => {
    expect(problemsOf('1')).toContainEqual({
      line: 1,
      message: expect.stringMatching(/file creation date .* is missing/),
    });
  });
});

describe('what banks send that is still read', () => {
  const items = itemsOf(BASE);
  const eachLine = (mutate: (line: string) => string) => (file: string) => file.split('\n').map(mutate).join('\n');
  const CTRL_Z = String.fromCharCode(0x1a);

  it.each<[string, Mutation]>([
    ['trailing blanks past column 94 on every line', eachLine((l) => `${l}   `)],
    ['a tab past column 94', onLine(RETURN_ENTRY, (l) => `${l}\t`)],
    [
      'blanks and a tab past column 94, CRLF line ends',
      (f) =>
        f
          .split('\n')
          .map((l) => `${l} \t`)
          .join('\r\n'),
    ],
    ['filler with trailing blanks', onLine(FILLER, (l) => `${l}  `)],
    ['filler with trailing blanks, every filler line', eachLine((l) => (l.startsWith('999999') ? `${l}    ` : l))],
    ['a Ctrl-Z (end of file) at the very end', (f) => `${f}${CTRL_Z}`],
    ['a Ctrl-Z after the last line break', (f) => `${f}\r\n${CTRL_Z}`],
    ['a file without line breaks that ends in a Ctrl-Z', (f) => `${f.split('\n').join('')}${CTRL_Z}`],
    ['a date of death of 000000 on an R03', onLine(RETURN_ADDENDA, put(22, '000000'))],
    ['a CCD batch of returns', onLine(BATCH_HEADER, put(51, 'CCD'))],
  ])('reads %s', (_, mutate) => {
    expect(itemsOf(mutate(BASE))).toEqual(items);
  });

  it('reads the return of a debit (26) in a mixed batch', () => {
    const file = [
      onLine(BATCH_HEADER, put(2, '200')),
      onLine(RETURN_ENTRY, put(2, '26')),
      onLine(BATCH_CONTROL, (l) => put(21, '000000125000000000004321')(put(2, '200')(l))),
      onLine(FILE_CONTROL, put(32, '000000125000000000004321')),
    ].reduce((f, mutate) => mutate(f), BASE);
    expect(itemsOf(file)).toEqual(items);
  });

  it('refuses a Ctrl-Z anywhere but the very end', () => {
    const file = onLine(RETURN_ENTRY, (l) => `${l}${CTRL_Z}`)(BASE);
    expect(problemsOf(file)).toContainEqual({
      line: RETURN_ENTRY,
      message: 'A record is 94 characters; this one is 95',
    });
  });
});
