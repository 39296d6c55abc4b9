import { describe, expect, it } from 'vitest';
import { CREATED, ODFI, originator, three } from '../fixtures/nacha-entries.js';
import {
  buildNachaFile,
  entryDetailRecord,
  type NachaEntryInput,
  type NachaFileInput,
} from '../../shared/adapters/nacha.js';
import {
  assertBankRules,
  assertDistinctModifiers,
  assertParsersAgree,
  assertTracesAcrossFiles,
  parserDisagreements,
  readNacha,
  readWithAchkit,
  readWithNodeNacha,
  type ReadFile,
} from '../support/nacha-check.js';

/*
 * Tests of the NACHA checker that other tests rely on: each check must accept a good file and reject the one
 * fault it exists for, or a test using it could pass whatever the writer does. Files come from the project's
 * writer; the balanced (offset debit) file is assembled here by hand from the writer's credit records.
 */

const PAY_DATE = '2026-03-16'; // a Monday and no Federal Reserve holiday: it is its own effective entry date
const CREDIT_TOTAL = 123_456 + 250_000 + 99;

const FUNDING = { routing: '026009593', account: '000123456789', accountType: 'checking' } as const;

function writerFile(entries: readonly NachaEntryInput[] = three, overrides: Partial<NachaFileInput> = {}): string {
  return buildNachaFile({
    originator,
    fileCreation: CREATED,
    effectiveEntryDate: PAY_DATE,
    companyEntryDescription: 'PAYROLL',
    entries: entries.map((e) => entryDetailRecord(ODFI, e)),
    ...overrides,
  }).content;
}

function withTraces(sequences: readonly number[]): NachaEntryInput[] {
  return three.map((e, i) => ({ ...e, traceSequence: sequences[i]! }));
}

function digits(value: number | bigint, width: number): string {
  const text = String(value);
  if (text.length > width) throw new Error(`test helper: ${text} does not fit in ${width} digits`);
  return text.padStart(width, '0');
}

interface OffsetDebit {
  routing: string;
  account: string;
  accountType: 'checking' | 'savings';
  /** The batch's credits unless given: a wrong amount is how a test makes an unbalanced "balanced" file. */
  amountCents?: number;
  traceSequence: number;
  /** Put the debit before the credits instead of after them. */
  first?: boolean;
}

/**
 * A mixed (200) file: the writer's header and credit records, a hand-written '627'/'637' offset debit, and batch
 * and file control records recomputed from the entries, so that achkit's validator accepts it whatever the debit.
 */
function withOffsetDebit(credited: string, debit: OffsetDebit): string {
  const lines = credited.split('\n');
  const [fileHeader, batchHeader] = [lines[0]!, lines[1]!];
  const credits = lines.filter((l) => l.startsWith('6'));
  const creditCents = credits.reduce((acc, l) => acc + Number(l.slice(29, 39)), 0);
  const debitCents = debit.amountCents ?? creditCents;
  const debitRecord =
    '6' +
    (debit.accountType === 'checking' ? '27' : '37') +
    debit.routing +
    debit.account.padEnd(17, ' ') +
    digits(debitCents, 10) +
    '1234567890'.padEnd(15, ' ') +
    'ACME PAYROLL INC'.padEnd(22, ' ') +
    '  ' +
    '0' +
    ODFI +
    digits(debit.traceSequence, 7);
  const entries = debit.first ? [debitRecord, ...credits] : [...credits, debitRecord];
  const hash = digits(entries.reduce((acc, l) => acc + BigInt(l.slice(3, 11)), 0n) % 10_000_000_000n, 10);
  const totals = digits(debitCents, 12) + digits(creditCents, 12);
  const mixedHeader = `5200${batchHeader.slice(4)}`;
  // Company id, then message authentication code and reserved, then ODFI and batch number as in the header.
  const batchControl =
    '8200' +
    digits(entries.length, 6) +
    hash +
    totals +
    batchHeader.slice(40, 50) +
    ' '.repeat(25) +
    batchHeader.slice(79, 94);
  const records = [fileHeader, mixedHeader, ...entries, batchControl];
  const blocks = Math.ceil((records.length + 1) / 10);
  const fileControl = `9${digits(1, 6)}${digits(blocks, 6)}${digits(entries.length, 8)}${hash}${totals}${' '.repeat(39)}`;
  records.push(fileControl);
  while (records.length < blocks * 10) records.push('9'.repeat(94));
  for (const r of records) expect(r).toHaveLength(94); // a test helper bug, not a checker failure
  return records.join('\n');
}

/** Rewrites the `index`th record (0-based line) of a file. */
function editRecord(content: string, index: number, edit: (record: string) => string): string {
  const lines = content.split('\n');
  lines[index] = edit(lines[index]!);
  return lines.join('\n');
}

function splice(record: string, start: number, text: string): string {
  return record.slice(0, start) + text + record.slice(start + text.length);
}

// ---------------------------------------------------------------------------------------------------------------

describe('readNacha', () => {
  it('reads a writer file the same with both parsers, into every field of the ReadFile', () => {
    const content = writerFile();
    const file = readNacha(content);
    expect(file).toEqual({
      header: {
        immediateDestination: '021000021',
        immediateOrigin: '1234567890',
        creationDate: '2026-03-13',
        // The hour depends on the zone the writer dates files in, which is the writer's business, not this one's.
        creationTime: content.slice(29, 33),
        fileIdModifier: 'A',
      },
      batches: [
        {
          serviceClass: 220,
          companyName: 'ACME PAYROLL INC',
          companyId: '1234567890',
          sec: 'PPD',
          description: 'PAYROLL',
          effectiveEntryDate: PAY_DATE,
          odfi: ODFI,
          batchNumber: 1,
          entries: [
            {
              transactionCode: 22,
              routing: '021000021',
              account: '123456789',
              amountCents: 123_456,
              individualId: 'EMP0001',
              individualName: 'JANE DOE',
              traceNumber: '021000020000001',
            },
            {
              transactionCode: 32,
              routing: '011000015',
              account: '00012345678901234',
              amountCents: 250_000,
              individualId: 'EMP0002',
              individualName: "JOSE O'BRIEN-SMITH",
              traceNumber: '021000020000002',
            },
            {
              transactionCode: 22,
              routing: '122105155',
              account: '9876',
              amountCents: 99,
              individualId: 'EMP0003',
              individualName: 'LI WEI',
              traceNumber: '021000020000003',
            },
          ],
          // Entry hash: 02100002 + 01100001 + 12210515 = 15410518.
          control: {
            entryAddendaCount: 3,
            entryHash: '0015410518',
            totalDebitCents: 0,
            totalCreditCents: CREDIT_TOTAL,
          },
        },
      ],
      control: {
        batchCount: 1,
        blockCount: 1,
        entryAddendaCount: 3,
        entryHash: '0015410518',
        totalDebitCents: 0,
        totalCreditCents: CREDIT_TOTAL,
      },
    } satisfies ReadFile);
    expect(file.header.creationTime).toMatch(/^\d{4}$/);
    // Each parser on its own gives that reading: the agreement is not one normalizer compared with itself.
    expect(readWithAchkit(content)).toEqual(file);
    expect(readWithNodeNacha(content)).toEqual(file);
    expect(() => assertBankRules(file, { payDate: PAY_DATE, balanced: false })).not.toThrow();
  });

  it('rejects a file whose amount was altered after writing (achkit validator)', () => {
    const content = writerFile();
    const tampered = content.replace('0000123456EMP0001', '0000123457EMP0001');
    expect(tampered).not.toBe(content);
    expect(() => readNacha(tampered)).toThrow(/validator rejects[\s\S]*BAD_BATCH_CREDIT[\s\S]*BAD_FILE_CREDIT/);
  });

  it('rejects a file the validator accepts but the two parsers read differently', () => {
    // A letter in a trace number: achkit keeps the text as is, node-nacha reads the field as a number (NaN).
    // achkit's validator does not look at trace numbers, so only the cross-check can catch it.
    const tampered = writerFile().replace('021000020000002', '02100002000000O');
    expect(() => readNacha(tampered)).toThrow(
      'parsers disagree (achkit vs node-nacha) on 1 field(s):\n  ' +
        'batches[0].entries[1].traceNumber: "02100002000000O" vs "NaN"',
    );
  });

  it("rejects a batch control that does not repeat its header's batch number, which achkit does not read", () => {
    const tampered = editRecord(writerFile(), 5, (r) => splice(r, 87, '0000002'));
    expect(() => readNacha(tampered)).toThrow(/batch 1 batch number: header 1, control 2/);
  });

  it("rejects a file with no batch control record, which achkit's validator lets through", () => {
    // Replaced by filler rather than removed, so the record count stays a multiple of 10.
    const tampered = editRecord(writerFile(), 5, () => '9'.repeat(94));
    expect(() => readNacha(tampered)).toThrow(/batch 1 has no batch control/);
  });
});

describe('the cross-parser comparison', () => {
  const content = writerFile();

  it('reports a field two readings disagree on, by path, with both values', () => {
    // A deliberately inconsistent pair: achkit reading one file, node-nacha another that differs in one name.
    const other = writerFile(three.map((e, i) => (i === 1 ? { ...e, individualName: 'Jose OBrien Smith' } : e)));
    const [a, b] = [readWithAchkit(content), readWithNodeNacha(other)];
    expect(parserDisagreements(a, b)).toEqual([
      'batches[0].entries[1].individualName: "JOSE O\'BRIEN-SMITH" vs "JOSE OBRIEN SMITH"',
    ]);
    expect(() => assertParsersAgree(a, b)).toThrow(/on 1 field\(s\):\n {2}batches\[0\]\.entries\[1\]\.individualName/);
    expect(() => assertParsersAgree(a, readWithNodeNacha(content))).not.toThrow();
  });

  it('compares every field of the reading: changing any one leaf is reported at exactly that path', () => {
    const file = readWithAchkit(content);
    const paths = leafPaths(file);
    // 5 header fields, 8 batch fields, 7 per entry, 4 batch control and 6 file control fields.
    expect(paths).toHaveLength(5 + 8 + 3 * 7 + 4 + 6);
    for (const path of paths) {
      const changed = structuredClone(file);
      const parent = path
        .slice(0, -1)
        .reduce<Record<string, unknown>>(
          (node, key) => node[key] as Record<string, unknown>,
          changed as unknown as Record<string, unknown>,
        );
      const key = path.at(-1)!;
      const value = parent[key];
      parent[key] = typeof value === 'number' ? value + 1 : `${String(value)}X`;
      const reported = parserDisagreements(file, changed);
      expect(reported, render(path)).toHaveLength(1);
      expect(reported[0]!.startsWith(`${render(path)}: `), reported[0]).toBe(true);
    }
  });

  it('reports a missing entry or batch as a length difference', () => {
    const file = readWithAchkit(content);
    const fewer = structuredClone(file);
    fewer.batches[0]!.entries.pop();
    expect(parserDisagreements(file, fewer)).toEqual(['batches[0].entries.length: 3 vs 2']);
    expect(parserDisagreements(file, { ...file, batches: [] })).toEqual(['batches.length: 1 vs 0']);
  });
});

function leafPaths(value: unknown, path: string[] = []): string[][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leafPaths(v, [...path, String(i)]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...path, k]));
  }
  return [path];
}

function render(path: readonly string[]): string {
  return path.map((k, i) => (/^\d+$/.test(k) ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
}

describe('assertBankRules', () => {
  const good = (): ReadFile => readNacha(writerFile());

  it('accepts the latest banking day before a weekend pay date', () => {
    // Sunday 2026-03-15 settles on Friday 2026-03-13.
    const file = readNacha(writerFile(three, { effectiveEntryDate: '2026-03-13' }));
    expect(() => assertBankRules(file, { payDate: '2026-03-15', balanced: false })).not.toThrow();
  });

  it.each([
    ['a Saturday', '2026-03-14', '2026-03-14', /effective entry date 2026-03-14 is a banking day/],
    ['Memorial Day', '2026-05-25', '2026-05-25', /effective entry date 2026-05-25 is a banking day/],
    ['after the pay date', '2026-03-17', PAY_DATE, /2026-03-17 is on or before pay date 2026-03-16/],
    ['an earlier banking day than needed', '2026-03-12', PAY_DATE, /is the last banking day on or before 2026-03-16/],
  ])('rejects an effective entry date on %s', (_label, effective, payDate, message) => {
    const file = readNacha(writerFile(three, { effectiveEntryDate: effective }));
    expect(() => assertBankRules(file, { payDate, balanced: false })).toThrow(message);
  });

  it('rejects a credits-only file expected balanced, naming the service class', () => {
    expect(() => assertBankRules(good(), { payDate: PAY_DATE, balanced: true, fundingAccount: FUNDING })).toThrow(
      /service class 200/,
    );
    expect(() => assertBankRules(good(), { payDate: PAY_DATE, balanced: true })).toThrow(
      /needs expected.fundingAccount/,
    );
  });

  // The writer cannot produce these entries; they are planted in the reading to show each rule has teeth.
  it.each<[string, (f: ReadFile) => void, RegExp]>([
    [
      'a prenote credit',
      (f) => {
        f.batches[0]!.entries[1]!.transactionCode = 33;
      },
      /no prenote/,
    ],
    [
      'a debit',
      (f) => {
        f.batches[0]!.entries[0]!.transactionCode = 27;
      },
      /a checking or savings credit/,
    ],
    [
      'a lowercase name',
      (f) => {
        f.batches[0]!.entries[2]!.individualName = 'Li Wei';
      },
      /name 'Li Wei' is ACH text/,
    ],
    [
      'a blank name',
      (f) => {
        f.batches[0]!.entries[2]!.individualName = '';
      },
      /requires the receiver's name/,
    ],
    [
      'an id with an underscore',
      (f) => {
        f.batches[0]!.entries[0]!.individualId = 'EMP_1';
      },
      /'EMP_1' is ACH text/,
    ],
    [
      'a batch control debit',
      (f) => {
        f.batches[0]!.control.totalDebitCents = 1;
      },
      /batch debits nothing/,
    ],
    [
      'a file control debit',
      (f) => {
        f.control.totalDebitCents = 1;
      },
      /file control total debit/,
    ],
    [
      'a credit total off by one',
      (f) => {
        f.batches[0]!.control.totalCreditCents += 1;
      },
      /the credits' sum/,
    ],
  ])('rejects %s in a credits-only file', (_label, plant, message) => {
    const file = good();
    expect(() => assertBankRules(file, { payDate: PAY_DATE, balanced: false })).not.toThrow();
    plant(file);
    expect(() => assertBankRules(file, { payDate: PAY_DATE, balanced: false })).toThrow(message);
  });

  describe('a balanced file (offset debit assembled by hand)', () => {
    const balanced = withOffsetDebit(writerFile(), { ...FUNDING, traceSequence: 4 });

    it('is a valid NACHA file both parsers read, and passes with balanced: true', () => {
      const file = readNacha(balanced);
      expect(file.batches[0]!.serviceClass).toBe(200);
      expect(file.batches[0]!.entries.at(-1)).toMatchObject({
        transactionCode: 27,
        routing: FUNDING.routing,
        account: FUNDING.account,
        amountCents: CREDIT_TOTAL,
      });
      expect(file.control).toMatchObject({ totalDebitCents: CREDIT_TOTAL, totalCreditCents: CREDIT_TOTAL });
      expect(() => assertBankRules(file, { payDate: PAY_DATE, balanced: true, fundingAccount: FUNDING })).not.toThrow();
      expect(() => assertBankRules(file, { payDate: PAY_DATE, balanced: false })).toThrow(/service class 220/);
    });

    it('passes from a savings funding account with transaction code 37, and not when checking is expected', () => {
      const savings = { ...FUNDING, accountType: 'savings' } as const;
      const file = readNacha(withOffsetDebit(writerFile(), { ...savings, traceSequence: 4 }));
      expect(() => assertBankRules(file, { payDate: PAY_DATE, balanced: true, fundingAccount: savings })).not.toThrow();
      expect(() => assertBankRules(file, { payDate: PAY_DATE, balanced: true, fundingAccount: FUNDING })).toThrow(
        /ends with its offset debit/,
      );
    });

    it('fails with a wrong debit amount, though the file itself is valid NACHA', () => {
      const wrong = withOffsetDebit(writerFile(), { ...FUNDING, amountCents: CREDIT_TOTAL - 1, traceSequence: 4 });
      const file = readNacha(wrong);
      expect(() => assertBankRules(file, { payDate: PAY_DATE, balanced: true, fundingAccount: FUNDING })).toThrow(
        /the offset debits are exactly the batch's credits/,
      );
    });

    it('fails when the debit goes to another account or comes first', () => {
      const file = readNacha(balanced);
      const elsewhere = { ...FUNDING, account: '000123456780' };
      expect(() => assertBankRules(file, { payDate: PAY_DATE, balanced: true, fundingAccount: elsewhere })).toThrow(
        /ends with its offset debit from the funding account/,
      );
      const credits = writerFile(withTraces([2, 3, 4]));
      const debitFirst = withOffsetDebit(credits, { ...FUNDING, traceSequence: 1, first: true });
      const first = readNacha(debitFirst);
      expect(() => assertBankRules(first, { payDate: PAY_DATE, balanced: true, fundingAccount: FUNDING })).toThrow(
        /ends with its offset debit/,
      );
    });
  });
});

describe('assertTracesAcrossFiles', () => {
  const file = (sequences: readonly number[]): ReadFile => readNacha(writerFile(withTraces(sequences)));

  it('accepts ascending files with ascending, disjoint trace ranges, gaps allowed', () => {
    expect(() => assertTracesAcrossFiles([file([1, 2, 3]), file([4, 5, 9]), file([10, 11, 12])])).not.toThrow();
  });

  it('rejects a trace number used by two files', () => {
    expect(() => assertTracesAcrossFiles([file([1, 2, 3]), file([3, 4, 5])])).toThrow(
      /trace 021000020000003 of file 2 is not already in file 1/,
    );
  });

  it('rejects files out of order, or whose ranges interleave without sharing a trace', () => {
    expect(() => assertTracesAcrossFiles([file([4, 5, 6]), file([1, 2, 3])])).toThrow(
      /file 2's lowest trace 021000020000001 is after file 1's highest 021000020000006/,
    );
    expect(() => assertTracesAcrossFiles([file([1, 3, 5]), file([2, 4, 6])])).toThrow(/file 2's lowest trace/);
  });

  it('rejects a file whose traces are not ascending', () => {
    // The writer refuses that order, so it is planted in the reading.
    const f = file([1, 2, 3]);
    f.batches[0]!.entries.reverse();
    expect(() => assertTracesAcrossFiles([f])).toThrow(/file 1: trace 021000020000002 is after the one before it/);
  });
});

describe('assertDistinctModifiers', () => {
  const file = (overrides: Partial<NachaFileInput>): ReadFile => readNacha(writerFile(three, overrides));

  it('rejects two files with the same destination, origin, creation date and file ID modifier', () => {
    expect(() => assertDistinctModifiers([file({}), file({ fileCreation: new Date('2026-03-13T18:30:00Z') })])).toThrow(
      /file 2 .*modifier A\) duplicates file 1/,
    );
  });

  it('accepts a different modifier, creation date or destination', () => {
    expect(() =>
      assertDistinctModifiers([
        file({}),
        file({ fileIdModifier: 'B' }),
        file({ fileCreation: new Date('2026-03-16T17:05:00Z') }),
        file({ originator: { ...originator, immediate_destination: '011000015' } }),
      ]),
    ).not.toThrow();
  });
});
