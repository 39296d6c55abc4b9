import { parse, validate } from 'achkit';
import { describe, expect, it } from 'vitest';
import {
  type BankCorrection,
  type BankReturn,
  bankReturnFile,
  corruptLine,
  type ReturnFileOptions,
} from '../support/bank-return-file.js';

/*
 * Tests of the tests' own return/NOC file writer: every field of every record is read back by its NACHA position
 * (1-based, inclusive, as the layouts print them), and the control records are recomputed here from the entry
 * records rather than trusted. achkit then reads the file as a second, independent parser.
 */

/** Positions `from`..`to` of a record, 1-based and inclusive. */
const at = (line: string, from: number, to: number): string => line.slice(from - 1, to);

const lines = (file: string): string[] => file.split('\n');

const ODFI = '021000021'; // the originator's bank: the file goes back to it
const RDFI = '011000015'; // the bank returning the entries
const CREATED = new Date('2026-03-13T17:05:42.123Z');

const OPTS: ReturnFileOptions = {
  odfiRouting: ODFI,
  rdfiRouting: RDFI,
  companyName: 'Acme Payroll Inc',
  companyIdentification: '1234567890',
  createdAt: CREATED,
  fileIdModifier: 'B',
};

const RETURNS: BankReturn[] = [
  {
    originalTrace: '021000020000001',
    code: 'R01',
    amountCents: 123_456,
    routing: '011000015',
    account: '00012345678901234',
    individualId: 'EMP0001',
    individualName: 'Jane Doe',
  },
  {
    originalTrace: '021000020000002',
    code: 'R14',
    amountCents: 250_000,
    routing: '122105155',
    account: '9876',
    accountType: 'savings',
    individualId: 'EMP0002',
    individualName: 'Li Wei',
    dateOfDeath: '260301',
    addendaInformation: 'REPRESENTATIVE PAYEE DECEASED',
  },
  {
    originalTrace: '021000020000003',
    code: 'R03',
    amountCents: 99,
    routing: '011000015',
    account: '55',
  },
];

const CORRECTIONS: BankCorrection[] = [
  {
    originalTrace: '021000020000004',
    code: 'C01',
    routing: '011000015',
    account: '1111',
    individualId: 'EMP0004',
    individualName: 'Ana Lima',
    corrected: { account: '11112222' },
  },
  {
    originalTrace: '021000020000005',
    code: 'C02',
    routing: '011000015',
    account: '2',
    corrected: { routing: '122105155' },
  },
  {
    originalTrace: '021000020000006',
    code: 'C03',
    routing: '011000015',
    account: '3',
    corrected: { routing: '122105155', account: '333333' },
  },
  {
    originalTrace: '021000020000007',
    code: 'C05',
    routing: '011000015',
    account: '4',
    corrected: { accountType: 'savings' },
  },
  {
    originalTrace: '021000020000008',
    code: 'C06',
    routing: '011000015',
    account: '5',
    accountType: 'savings',
    corrected: { account: '12345678901234567', accountType: 'checking' },
  },
  {
    originalTrace: '021000020000009',
    code: 'C07',
    routing: '011000015',
    account: '6',
    corrected: { routing: '122105155', account: '666', accountType: 'savings' },
  },
];

/** Corrected data (addenda 98 positions 36-64) expected for each of CORRECTIONS, written out by hand. */
const CORRECTED_DATA = [
  '11112222                     ', // C01: account in 1-17
  '122105155                    ', // C02: routing in 1-9
  '122105155   333333           ', // C03: routing 1-9, 3 blanks, account from 13
  '32                           ', // C05: transaction code 1-2
  '12345678901234567   22       ', // C06: account 1-17, 3 blanks, transaction code 21-22
  '122105155666              32 ', // C07: routing 1-9, account 10-26, transaction code 27-28
];

/** Independent recomputation of a batch's (or file's) entry hash from its entry detail records. */
function entryHashOf(entries: string[]): string {
  const sum = entries.reduce((total, e) => total + BigInt(at(e, 4, 11)), 0n);
  return sum.toString().padStart(10, '0').slice(-10);
}

describe('bankReturnFile: returns and NOCs', () => {
  const file = bankReturnFile(OPTS, { returns: RETURNS, corrections: CORRECTIONS });
  const rows = lines(file);

  it('is 94-character records, blocked by 10 with 9-filler, in 1 5 (6 7)* 8 5 (6 7)* 8 9 order', () => {
    expect(file.endsWith('\n')).toBe(false);
    for (const row of rows) expect(row).toHaveLength(94);
    // 1 + (1 + 3*2 + 1) + (1 + 6*2 + 1) + 1 = 24 records: 6 filler records make 30.
    expect(rows).toHaveLength(30);
    expect(rows.slice(24)).toEqual(Array(6).fill('9'.repeat(94)));
    const types = rows
      .slice(0, 24)
      .map((r) => r[0])
      .join('');
    expect(types).toBe(`15${'67'.repeat(3)}85${'67'.repeat(6)}89`);
  });

  it('writes the file header back to the ODFI from the RDFI', () => {
    const h = rows[0]!;
    expect(at(h, 1, 1)).toBe('1');
    expect(at(h, 2, 3)).toBe('01');
    expect(at(h, 4, 13)).toBe(` ${ODFI}`);
    expect(at(h, 14, 23)).toBe(` ${RDFI}`);
    expect(at(h, 24, 29)).toBe('260313');
    expect(at(h, 30, 33)).toBe('1705');
    expect(at(h, 34, 34)).toBe('B');
    expect(at(h, 35, 37)).toBe('094');
    expect(at(h, 38, 39)).toBe('10');
    expect(at(h, 40, 40)).toBe('1');
    expect(at(h, 41, 63)).toBe(' '.repeat(23));
    expect(at(h, 64, 86)).toBe(' '.repeat(23));
    expect(at(h, 87, 94)).toBe(' '.repeat(8));
  });

  it('writes a PPD return batch header and a COR batch header originated by the RDFI', () => {
    const expected = [
      { line: rows[1]!, sec: 'PPD', description: 'RETURN    ', batchNumber: '0000001' },
      { line: rows[9]!, sec: 'COR', description: 'NOC       ', batchNumber: '0000002' },
    ];
    for (const { line, sec, description, batchNumber } of expected) {
      expect(at(line, 1, 1)).toBe('5');
      expect(at(line, 2, 4)).toBe('220');
      expect(at(line, 5, 20)).toBe('Acme Payroll Inc');
      expect(at(line, 21, 40)).toBe(' '.repeat(20));
      expect(at(line, 41, 50)).toBe('1234567890');
      expect(at(line, 51, 53)).toBe(sec);
      expect(at(line, 54, 63)).toBe(description);
      expect(at(line, 64, 69)).toBe(' '.repeat(6));
      expect(at(line, 70, 75)).toBe('260313');
      expect(at(line, 76, 78)).toBe('   ');
      expect(at(line, 79, 79)).toBe('1');
      expect(at(line, 80, 87)).toBe('01100001');
      expect(at(line, 88, 94)).toBe(batchNumber);
    }
  });

  it('writes each return as a 21/31 entry to the ODFI followed by its 99 addenda', () => {
    RETURNS.forEach((r, i) => {
      const entry = rows[2 + 2 * i]!;
      const addenda = rows[3 + 2 * i]!;
      const trace = `01100001${String(i + 1).padStart(7, '0')}`;

      expect(at(entry, 1, 1)).toBe('6');
      expect(at(entry, 2, 3)).toBe(r.accountType === 'savings' ? '31' : '21');
      expect(at(entry, 4, 11)).toBe('02100002');
      expect(at(entry, 12, 12)).toBe('1');
      expect(at(entry, 13, 29)).toBe(r.account.padEnd(17));
      expect(at(entry, 30, 39)).toBe(String(r.amountCents).padStart(10, '0'));
      expect(at(entry, 40, 54)).toBe((r.individualId ?? '').padEnd(15));
      expect(at(entry, 55, 76)).toBe((r.individualName ?? '').padEnd(22));
      expect(at(entry, 77, 78)).toBe('  ');
      expect(at(entry, 79, 79)).toBe('1');
      expect(at(entry, 80, 94)).toBe(trace);

      expect(at(addenda, 1, 1)).toBe('7');
      expect(at(addenda, 2, 3)).toBe('99');
      expect(at(addenda, 4, 6)).toBe(r.code);
      expect(at(addenda, 7, 21)).toBe(r.originalTrace);
      expect(at(addenda, 22, 27)).toBe(r.dateOfDeath ?? '      ');
      expect(at(addenda, 28, 35)).toBe(r.routing.slice(0, 8));
      expect(at(addenda, 36, 79)).toBe((r.addendaInformation ?? '').padEnd(44));
      expect(at(addenda, 80, 94)).toBe(trace);
    });
    // One whole record, written out by hand: 7 99 R14, original trace, date of death, original RDFI, information, trace.
    expect(rows[5]).toBe(
      `799R14021000020000002260301${'12210515'}${'REPRESENTATIVE PAYEE DECEASED'.padEnd(44)}011000010000002`,
    );
  });

  it('writes each NOC as a zero 21/31 entry followed by its 98 addenda with the corrected data laid out', () => {
    CORRECTIONS.forEach((c, i) => {
      const entry = rows[10 + 2 * i]!;
      const addenda = rows[11 + 2 * i]!;
      const trace = `01100001${String(RETURNS.length + i + 1).padStart(7, '0')}`;

      expect(at(entry, 1, 1)).toBe('6');
      expect(at(entry, 2, 3)).toBe(c.accountType === 'savings' ? '31' : '21');
      expect(at(entry, 4, 12)).toBe(ODFI);
      expect(at(entry, 13, 29)).toBe(c.account.padEnd(17));
      expect(at(entry, 30, 39)).toBe('0000000000');
      expect(at(entry, 40, 54)).toBe((c.individualId ?? '').padEnd(15));
      expect(at(entry, 55, 76)).toBe((c.individualName ?? '').padEnd(22));
      expect(at(entry, 77, 78)).toBe('  ');
      expect(at(entry, 79, 79)).toBe('1');
      expect(at(entry, 80, 94)).toBe(trace);

      expect(at(addenda, 1, 1)).toBe('7');
      expect(at(addenda, 2, 3)).toBe('98');
      expect(at(addenda, 4, 6)).toBe(c.code);
      expect(at(addenda, 7, 21)).toBe(c.originalTrace);
      expect(at(addenda, 22, 27)).toBe(' '.repeat(6));
      expect(at(addenda, 28, 35)).toBe('01100001');
      expect(at(addenda, 36, 64)).toBe(CORRECTED_DATA[i]);
      expect(at(addenda, 65, 79)).toBe(' '.repeat(15));
      expect(at(addenda, 80, 94)).toBe(trace);
    });
  });

  it('gives every entry a distinct, ascending RDFI trace number', () => {
    const traces = rows.filter((r) => r[0] === '6').map((r) => at(r, 80, 94));
    expect(traces).toHaveLength(RETURNS.length + CORRECTIONS.length);
    expect([...traces].sort()).toEqual(traces);
    expect(new Set(traces).size).toBe(traces.length);
    for (const t of traces) expect(t.startsWith('01100001')).toBe(true);
  });

  it('balances each batch control against its entries', () => {
    const headers = rows.flatMap((r, i) => (r[0] === '5' ? [i] : []));
    const controls = rows.flatMap((r, i) => (r[0] === '8' ? [i] : []));
    expect(headers).toEqual([1, 9]);
    expect(controls).toEqual([8, 22]);
    const batches = [
      { header: 1, control: 8, returned: RETURNS.reduce((s, r) => s + r.amountCents, 0) },
      { header: 9, control: 22, returned: 0 },
    ];
    for (const { header, control, returned } of batches) {
      const body = rows.slice(header + 1, control);
      const entries = body.filter((r) => r[0] === '6');
      const credit = entries.reduce((s, e) => s + Number(at(e, 30, 39)), 0);
      expect(credit).toBe(returned);
      const h = rows[header]!;
      const c = rows[control]!;
      expect(at(c, 1, 1)).toBe('8');
      expect(at(c, 2, 4)).toBe(at(h, 2, 4));
      expect(at(c, 5, 10)).toBe(String(body.length).padStart(6, '0'));
      expect(at(c, 11, 20)).toBe(entryHashOf(entries));
      expect(at(c, 21, 32)).toBe('0'.repeat(12));
      expect(at(c, 33, 44)).toBe(String(credit).padStart(12, '0'));
      expect(at(c, 45, 54)).toBe(at(h, 41, 50));
      expect(at(c, 55, 73)).toBe(' '.repeat(19));
      expect(at(c, 74, 79)).toBe(' '.repeat(6));
      expect(at(c, 80, 87)).toBe(at(h, 80, 87));
      expect(at(c, 88, 94)).toBe(at(h, 88, 94));
    }
    expect(at(rows[8]!, 11, 20)).toBe('0006300006'); // 3 x 02100002
    expect(at(rows[8]!, 33, 44)).toBe('000000373555');
    expect(at(rows[22]!, 11, 20)).toBe('0012600012'); // 6 x 02100002
  });

  it('balances the file control against the batches and the blocks', () => {
    const f = rows[23]!;
    const entries = rows.filter((r) => r[0] === '6');
    const controls = rows.filter((r) => r[0] === '8');
    const addenda = rows.filter((r) => r[0] === '7');
    expect(at(f, 1, 1)).toBe('9');
    expect(at(f, 2, 7)).toBe('000002');
    expect(at(f, 8, 13)).toBe(String(rows.length / 10).padStart(6, '0'));
    expect(at(f, 14, 21)).toBe(String(entries.length + addenda.length).padStart(8, '0'));
    expect(at(f, 22, 31)).toBe(entryHashOf(entries));
    const batchHashSum = controls.reduce((s, c) => s + Number(at(c, 11, 20)), 0);
    expect(Number(at(f, 22, 31))).toBe(batchHashSum);
    expect(at(f, 32, 43)).toBe('0'.repeat(12));
    expect(at(f, 44, 55)).toBe(String(controls.reduce((s, c) => s + Number(at(c, 33, 44)), 0)).padStart(12, '0'));
    expect(at(f, 56, 94)).toBe(' '.repeat(39));
  });

  /*
   * achkit (0.2.0) can parse a file with 98/99 addenda: its parser keeps the addenda type (positions 2-3) and reads
   * positions 4-83 as free text, the layout of an 05 addenda, so the 98/99 fields are checked here as slices of that
   * text. Its validator cannot judge a return file: it counts only transaction codes whose second digit is 2 or 3
   * (or 7 or 8) toward the totals, so the return codes 21/31 count as neither credit nor debit and it reports the
   * returned amounts as a credit-total mismatch. Everything else it reconciles (record length, blocking, routing
   * check digits, counts, entry hashes, block count) must pass.
   */
  it('reads back with achkit', () => {
    const parsed = parse(file);
    expect(parsed.destinationRouting).toBe(ODFI);
    expect(parsed.originRouting).toBe(RDFI);
    expect(parsed.creationDate).toBe('260313');
    expect(parsed.creationTime).toBe('1705');
    expect(parsed.fileIdModifier).toBe('B');
    expect(parsed.batches.map((b) => [b.serviceClass, b.sec, b.description, b.originDfi, b.batchNumber])).toEqual([
      [220, 'PPD', 'RETURN', '01100001', 1],
      [220, 'COR', 'NOC', '01100001', 2],
    ]);
    const [returned, noc] = parsed.batches;
    expect(
      returned!.entries.map((e) => [e.txnCode, e.routing, e.account, e.amountCents, e.idNumber, e.name, e.addendaFlag]),
    ).toEqual(
      RETURNS.map((r) => [
        r.accountType === 'savings' ? 31 : 21,
        ODFI,
        r.account,
        r.amountCents,
        r.individualId ?? '',
        r.individualName ?? '',
        true,
      ]),
    );
    returned!.entries.forEach((e, i) => {
      const r = RETURNS[i]!;
      expect(e.addenda).toHaveLength(1);
      expect(e.addenda[0]!.type).toBe('99');
      expect(e.addenda[0]!.info.slice(0, 18)).toBe(r.code + r.originalTrace);
      expect(e.addenda[0]!.info.slice(24, 32)).toBe(r.routing.slice(0, 8));
    });
    expect(noc!.entries.map((e) => [e.txnCode, e.amountCents, e.addenda[0]!.type])).toEqual(
      CORRECTIONS.map((c) => [c.accountType === 'savings' ? 31 : 21, 0, '98']),
    );
    noc!.entries.forEach((e, i) => {
      const c = CORRECTIONS[i]!;
      expect(e.addenda[0]!.info.slice(0, 18)).toBe(c.code + c.originalTrace);
      expect(e.addenda[0]!.info.slice(32, 61)).toBe(CORRECTED_DATA[i]);
    });
    expect(returned!.control).toEqual({
      entryAddendaCount: 6,
      entryHash: '0006300006',
      totalDebit: 0,
      totalCredit: 373_555,
    });
    expect(noc!.control).toEqual({ entryAddendaCount: 12, entryHash: '0012600012', totalDebit: 0, totalCredit: 0 });
    expect(parsed.control).toEqual({
      batchCount: 2,
      blockCount: 3,
      entryAddendaCount: 18,
      entryHash: '0018900018',
      totalDebit: 0,
      totalCredit: 373_555,
    });

    expect(validate(file).errors.map((e) => e.code)).toEqual(['BAD_BATCH_CREDIT', 'BAD_FILE_CREDIT']);
    // With no amounts (a NOC-only file) there is nothing for achkit to misclassify: it accepts the file outright.
    expect(validate(bankReturnFile(OPTS, { corrections: CORRECTIONS }))).toEqual({ ok: true, errors: [] });
  });
});

describe('bankReturnFile: shapes and blocking', () => {
  it('writes a returns-only file of exactly 10 records with no filler', () => {
    const rows = lines(bankReturnFile(OPTS, { returns: RETURNS }));
    expect(rows.map((r) => r[0]).join('')).toBe('1567676789');
    expect(at(rows[9]!, 2, 7)).toBe('000001');
    expect(at(rows[9]!, 8, 13)).toBe('000001');
  });

  it('numbers a corrections-only file batch 1 and starts its traces at 1', () => {
    const rows = lines(bankReturnFile(OPTS, { corrections: CORRECTIONS.slice(0, 1) }));
    expect(rows).toHaveLength(10);
    expect(at(rows[1]!, 51, 53)).toBe('COR');
    expect(at(rows[1]!, 88, 94)).toBe('0000001');
    expect(at(rows[2]!, 80, 94)).toBe('011000010000001');
    expect(at(rows[4]!, 88, 94)).toBe('0000001');
    expect(rows.slice(6)).toEqual(Array(4).fill('9'.repeat(94)));
  });

  it('writes an empty file as a header, a control with zero batches and filler', () => {
    const rows = lines(bankReturnFile(OPTS, {}));
    expect(rows).toHaveLength(10);
    expect(rows[1]).toBe(`9000000000001${'0'.repeat(8 + 10 + 12 + 12)}${' '.repeat(39)}`);
  });

  it('keeps the rightmost 10 digits of an entry hash that overflows, in the batch and the file control', () => {
    const many = Array.from({ length: 1000 }, (_, i): BankReturn => ({ ...RETURNS[0]!, amountCents: i + 1 }));
    const rows = lines(bankReturnFile({ ...OPTS, odfiRouting: '123456780' }, { returns: many }));
    // 1000 x 12345678 = 12,345,678,000: 11 digits.
    expect(rows).toHaveLength(2010);
    const control = rows[2002]!;
    const fileControl = rows[2003]!;
    expect(at(control, 11, 20)).toBe('2345678000');
    expect(at(control, 5, 10)).toBe('002000');
    expect(at(control, 33, 44)).toBe('000000500500');
    expect(at(fileControl, 8, 13)).toBe('000201');
    expect(at(fileControl, 22, 31)).toBe('2345678000');
    expect(at(rows[2001]!, 80, 94)).toBe('011000010001000');
  });

  it('defaults the file id modifier to A and the creation time to now', () => {
    const before = Date.now();
    const rows = lines(bankReturnFile({ ...OPTS, fileIdModifier: undefined, createdAt: undefined }, {}));
    expect(at(rows[0]!, 34, 34)).toBe('A');
    const stamp = at(rows[0]!, 24, 33);
    const candidates = [before, Date.now()].map((t) => {
      const d = new Date(t);
      const two = (n: number) => String(n).padStart(2, '0');
      return `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}`;
    });
    expect(candidates).toContain(stamp);
  });

  it('refuses input it cannot write faithfully', () => {
    const r = RETURNS[0]!;
    const c = CORRECTIONS[0]!;
    expect(() => bankReturnFile(OPTS, { returns: [{ ...r, originalTrace: '12345' }] })).toThrow(/original trace/);
    expect(() => bankReturnFile(OPTS, { returns: [{ ...r, code: 'X01' }] })).toThrow(/return code/);
    expect(() => bankReturnFile(OPTS, { returns: [{ ...r, account: '1'.repeat(18) }] })).toThrow(/account/);
    expect(() => bankReturnFile(OPTS, { returns: [{ ...r, amountCents: -1 }] })).toThrow(/amount/);
    expect(() => bankReturnFile(OPTS, { returns: [{ ...r, amountCents: 1.5 }] })).toThrow(/amount/);
    expect(() => bankReturnFile(OPTS, { returns: [{ ...r, amountCents: 10_000_000_000 }] })).toThrow(/amount/);
    expect(() => bankReturnFile(OPTS, { returns: [{ ...r, individualName: 'José' }] })).toThrow(/ASCII/);
    expect(() => bankReturnFile(OPTS, { returns: [{ ...r, addendaInformation: 'x'.repeat(45) }] })).toThrow(/addenda/);
    expect(() => bankReturnFile(OPTS, { returns: [{ ...r, dateOfDeath: '2026-03-01' }] })).toThrow(/date of death/);
    expect(() => bankReturnFile(OPTS, { corrections: [{ ...c, code: 'R01' }] })).toThrow(/change code/);
    expect(() => bankReturnFile(OPTS, { corrections: [{ ...c, corrected: {} }] })).toThrow(/corrected\.account/);
    expect(() => bankReturnFile({ ...OPTS, odfiRouting: '02100002' }, {})).toThrow(/odfiRouting/);
    expect(() => bankReturnFile({ ...OPTS, companyName: 'A'.repeat(17) }, { returns: [r] })).toThrow(/company name/);
    expect(() => bankReturnFile({ ...OPTS, companyIdentification: '123' }, {})).toThrow(/company identification/);
  });

  it('writes a change code it does not lay out with blank corrected data', () => {
    const rows = lines(bankReturnFile(OPTS, { corrections: [{ ...CORRECTIONS[0]!, code: 'C09' }] }));
    expect(at(rows[3]!, 4, 6)).toBe('C09');
    expect(at(rows[3]!, 36, 64)).toBe(' '.repeat(29));
  });
});

describe('corruptLine', () => {
  const file = bankReturnFile(OPTS, { returns: RETURNS });

  it('changes only the numbered line (1-based)', () => {
    const bad = corruptLine(file, 4, (line) => `${line.slice(0, 3)}R99${line.slice(6)}`);
    const before = lines(file);
    const after = lines(bad);
    expect(after).toHaveLength(before.length);
    after.forEach((line, i) => {
      if (i === 3) expect(at(line, 4, 6)).toBe('R99');
      else expect(line).toBe(before[i]);
    });
    expect(at(before[3]!, 4, 6)).toBe('R01');
  });

  it('refuses a line that is not in the file', () => {
    expect(() => corruptLine(file, 0, (l) => l)).toThrow();
    expect(() => corruptLine(file, 11, (l) => l)).toThrow();
  });
});
