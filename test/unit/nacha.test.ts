import { parse, validate } from 'achkit';
import { afterEach, describe, expect, it } from 'vitest';
import { withCheckDigit } from '../../shared/domain/aba.js';
import { CREATED, ODFI, originator, three } from '../fixtures/nacha-entries.js';
import {
  buildNachaFile,
  entryDetailRecord,
  MAX_ENTRIES,
  MAX_ENTRY_CENTS,
  NachaFormatError,
  parseControlTotals,
  traceNumber,
  type NachaEntryInput,
  type NachaFileInput,
} from '../../shared/adapters/nacha.js';
import { assertBankRules, readNacha } from '../support/nacha-check.js';

/*
 * The writer is checked three ways: against a file written out by hand from the NACHA field table; by achkit,
 * an independent parser and reconciliation validator from npm (record length, blocking, ABA check digits,
 * entry hash, batch and file counts and totals, block count); and by re-deriving every control total here
 * from the fixed-width positions of the NACHA record layouts, for the fields achkit does not read.
 */

function fileInput(entries: readonly NachaEntryInput[], overrides: Partial<NachaFileInput> = {}): NachaFileInput {
  return {
    originator,
    fileCreation: CREATED,
    effectiveEntryDate: '2026-03-16',
    companyEntryDescription: 'PAYROLL',
    entries: entries.map((e) => entryDetailRecord(ODFI, e)),
    ...overrides,
  };
}

function manyEntries(n: number): NachaEntryInput[] {
  return Array.from({ length: n }, (_, i) => ({
    // 32xxxxxx (a thrift routing symbol): 25,000 of them sum to 12 digits, so the hash must be truncated.
    routingNumber: withCheckDigit(String(32_000_000 + ((i * 7_919) % 999_999))),
    accountNumber: String(10_000_000 + i),
    accountType: i % 3 === 0 ? 'savings' : 'checking',
    amountCents: 100 + ((i * 104_729) % 5_000_000),
    individualId: `E${String(i).padStart(9, '0')}`,
    individualName: `Employee ${i}`,
    traceSequence: i + 1,
  }));
}

describe('NACHA entry detail record', () => {
  it('lays out a checking credit field by field (transaction code 22)', () => {
    const line = entryDetailRecord(ODFI, three[0]!);
    expect(line).toBe(
      '6' +
        '22' +
        '02100002' +
        '1' +
        '123456789        ' +
        '0000123456' +
        'EMP0001        ' +
        'JANE DOE              ' +
        '  ' +
        '0' +
        '021000020000001',
    );
    expect(line).toHaveLength(94);
  });

  it('uses transaction code 32 for a savings credit', () => {
    const line = entryDetailRecord(ODFI, three[1]!);
    expect(line.slice(1, 3)).toBe('32');
    expect(line.slice(12, 29)).toBe('00012345678901234'); // a 17-digit account fills its field, leading zeros kept
  });

  it('builds the trace number from the ODFI and a 7-digit sequence', () => {
    expect(traceNumber(ODFI, 1)).toBe('021000020000001');
    expect(traceNumber(ODFI, 9_999_999)).toBe('021000029999999');
    expect(traceNumber('12345678', 4321)).toHaveLength(15);
    expect(entryDetailRecord(ODFI, { ...three[0]!, traceSequence: 42 }).slice(79)).toBe('021000020000042');
    expect(() => traceNumber(ODFI, 0)).toThrow(NachaFormatError);
    expect(() => traceNumber(ODFI, 10_000_000)).toThrow(/trace sequence/);
    expect(() => traceNumber(ODFI, 1.5)).toThrow(/trace sequence/);
    expect(() => traceNumber('0210000', 1)).toThrow(/ODFI/);
  });

  it.each([
    ["José O'Brien-Smith", "JOSE O'BRIEN-SMITH    "],
    ['Zoë   Müller', 'ZOE MULLER            '],
    ['  anne_marie (annie) smith-johnson iii', 'ANNE MARIE ANNIE SMITH'], // cut at 22
    ['Wu, Mei & Chen/Li.', 'WU, MEI & CHEN/LI.    '],
    ['Ｔｏｍ 李 Smith', 'TOM SMITH             '], // full-width letters fold to ASCII; the rest becomes a space
  ])('sanitises the name %j to %j', (name, field) => {
    const line = entryDetailRecord(ODFI, { ...three[0]!, individualName: name });
    expect(line.slice(54, 76)).toBe(field);
    expect(line).toHaveLength(94);
  });

  it('sanitises the individual id and refuses one longer than 15 characters rather than cutting it', () => {
    expect(entryDetailRecord(ODFI, { ...three[0]!, individualId: 'emp_01j9x' }).slice(39, 54)).toBe('EMP 01J9X      ');
    expect(entryDetailRecord(ODFI, { ...three[0]!, individualId: '' }).slice(39, 54)).toBe(' '.repeat(15));
    expect(() => entryDetailRecord(ODFI, { ...three[0]!, individualId: '0123456789ABCDEF' })).toThrow(/individual id/);
  });

  it.each([
    ['zero', 0],
    ['negative', -1],
    ['fractional', 12.5],
    ['NaN', Number.NaN],
    ['over 10 digits', MAX_ENTRY_CENTS + 1],
    ['unsafe', Number.MAX_SAFE_INTEGER + 2],
  ])('refuses a %s amount', (_label, amountCents) => {
    expect(() => entryDetailRecord(ODFI, { ...three[0]!, amountCents })).toThrow(/amount/);
  });

  it('accepts the largest amount the 10-digit field holds', () => {
    expect(entryDetailRecord(ODFI, { ...three[0]!, amountCents: MAX_ENTRY_CENTS }).slice(29, 39)).toBe('9999999999');
  });

  it.each(['02100002', '0210000211', '021000022', '02100002a', ''])(
    'refuses the routing number %j',
    (routingNumber) => {
      expect(() => entryDetailRecord(ODFI, { ...three[0]!, routingNumber })).toThrow(/routing number/);
    },
  );

  it.each(['123', '123456789012345678', '1234-5678', '12345678A', ''])(
    'refuses the account number %j without echoing it',
    (accountNumber) => {
      const attempt = (): string => entryDetailRecord(ODFI, { ...three[0]!, accountNumber });
      expect(attempt).toThrow(/account number must be 4–17 digits/);
      try {
        attempt();
      } catch (error) {
        if (accountNumber !== '') expect((error as Error).message).not.toContain(accountNumber);
      }
    },
  );

  it('writes the individual id for a name with no ACH letter left, refuses both blank, and an unknown account type', () => {
    expect(entryDetailRecord(ODFI, { ...three[0]!, individualName: '李小龙' }).slice(54, 76)).toBe(
      'EMP0001'.padEnd(22, ' '),
    );
    expect(() => entryDetailRecord(ODFI, { ...three[0]!, individualName: '李小龙', individualId: '' })).toThrow(
      /individual name/,
    );
    expect(() => entryDetailRecord(ODFI, { ...three[0]!, accountType: 'loan' as 'checking' })).toThrow(/account type/);
  });
});

describe('NACHA file', () => {
  it('writes the hand-computed three-entry file byte for byte', () => {
    const { content, control } = buildNachaFile(fileInput(three));
    // Entry hash: 02100002 + 01100001 + 12210515 = 15410518. Credits: 123456 + 250000 + 99 = 373555 cents.
    const expected = [
      // 17:05 UTC on 13 March 2026 is 13:05 in New York (daylight time began on 8 March).
      '1' +
        '01' +
        ' 021000021' +
        '1234567890' +
        '260313' +
        '1305' +
        'A' +
        '094' +
        '10' +
        '1' +
        'SANDBOX BANK           ' +
        'ACME PAYROLL INC       ' +
        '        ',
      '5' +
        '220' +
        'ACME PAYROLL INC' +
        ' '.repeat(20) +
        '1234567890' +
        'PPD' +
        'PAYROLL   ' +
        '      ' +
        '260316' +
        '   ' +
        '1' +
        '02100002' +
        '0000001',
      '6' +
        '22' +
        '02100002' +
        '1' +
        '123456789        ' +
        '0000123456' +
        'EMP0001        ' +
        'JANE DOE              ' +
        '  ' +
        '0' +
        '021000020000001',
      '6' +
        '32' +
        '01100001' +
        '5' +
        '00012345678901234' +
        '0000250000' +
        'EMP0002        ' +
        "JOSE O'BRIEN-SMITH    " +
        '  ' +
        '0' +
        '021000020000002',
      '6' +
        '22' +
        '12210515' +
        '5' +
        '9876             ' +
        '0000000099' +
        'EMP0003        ' +
        'LI WEI                ' +
        '  ' +
        '0' +
        '021000020000003',
      '8' +
        '220' +
        '000003' +
        '0015410518' +
        '000000000000' +
        '000000373555' +
        '1234567890' +
        ' '.repeat(19) +
        ' '.repeat(6) +
        '02100002' +
        '0000001',
      `9000001000001000000030015410518000000000000000000373555${' '.repeat(39)}`,
      '9'.repeat(94),
      '9'.repeat(94),
      '9'.repeat(94),
    ].join('\n');
    expect(content).toBe(expected);
    expect(control).toEqual({
      batchCount: 1,
      blockCount: 1,
      entryAddendaCount: 3,
      entryHash: '0015410518',
      totalDebitCents: 0,
      totalCreditCents: 373_555,
    });
    expect(parseControlTotals(content)).toEqual(control);
    expect(parseControlTotals(content.replaceAll('\n', '\r\n'))).toEqual(control);
  });

  it('keeps every record 94 characters, pads with all-9 records to a multiple of 10, and separates with LF only', () => {
    for (const n of [1, 5, 6, 7, 16, 123]) {
      const { content, control } = buildNachaFile(fileInput(manyEntries(n)));
      expect(content).not.toContain('\r');
      expect(content.endsWith('\n')).toBe(false);
      const lines = content.split('\n');
      expect(lines.every((l) => l.length === 94)).toBe(true);
      expect(lines.length % 10).toBe(0);
      expect(lines.length).toBe(Math.ceil((n + 4) / 10) * 10);
      expect(control.blockCount).toBe(lines.length / 10);
      const padding = lines.slice(n + 4);
      expect(padding.every((l) => l === '9'.repeat(94))).toBe(true);
      // The records before the padding are the file's real records, in NACHA order.
      expect(
        lines
          .slice(0, n + 4)
          .map((l) => l[0])
          .join(''),
      ).toBe(`15${'6'.repeat(n)}89`);
    }
  });

  it('is read back by the independent achkit parser with the same entries and totals, and passes its validator', () => {
    const input = fileInput(three);
    const { content, control } = buildNachaFile(input);

    expect(validate(content)).toEqual({ ok: true, errors: [] });
    const parsed = parse(content);
    expect(parsed).toMatchObject({
      destinationRouting: '021000021',
      originRouting: '1234567890',
      creationDate: '260313',
      creationTime: '1305',
      fileIdModifier: 'A',
    });
    expect(parsed.batches).toHaveLength(1);
    const batch = parsed.batches[0]!;
    expect(batch).toMatchObject({
      serviceClass: 220,
      companyName: 'ACME PAYROLL INC',
      companyId: '1234567890',
      sec: 'PPD',
      description: 'PAYROLL',
      effectiveDate: '260316',
      originDfi: ODFI,
      batchNumber: 1,
    });
    expect(
      batch.entries.map((e) => ({
        txnCode: e.txnCode,
        routing: e.routing,
        account: e.account,
        amountCents: e.amountCents,
        idNumber: e.idNumber,
        traceNumber: e.traceNumber,
        addenda: e.addendaFlag,
      })),
    ).toEqual(
      three.map((e) => ({
        txnCode: e.accountType === 'checking' ? 22 : 32,
        routing: e.routingNumber,
        account: e.accountNumber,
        amountCents: e.amountCents,
        idNumber: e.individualId,
        traceNumber: traceNumber(ODFI, e.traceSequence),
        addenda: false,
      })),
    );
    expect(batch.control).toEqual({
      entryAddendaCount: 3,
      entryHash: control.entryHash,
      totalDebit: 0,
      totalCredit: control.totalCreditCents,
    });
    expect(parsed.control).toEqual({
      batchCount: control.batchCount,
      blockCount: control.blockCount,
      entryAddendaCount: control.entryAddendaCount,
      entryHash: control.entryHash,
      totalDebit: control.totalDebitCents,
      totalCredit: control.totalCreditCents,
    });
  });

  it('the independent validator is not vacuous: it rejects a file whose amount was altered after writing', () => {
    const { content } = buildNachaFile(fileInput(three));
    const tampered = content.replace('0000123456EMP0001', '0000123457EMP0001');
    expect(tampered).not.toBe(content);
    const result = validate(tampered);
    expect(result.ok).toBe(false);
    expect(result.errors.map((e) => e.code)).toEqual(expect.arrayContaining(['BAD_BATCH_CREDIT', 'BAD_FILE_CREDIT']));
    const badHash = validate(content.replace('0015410518', '0015410519'));
    expect(badHash.errors.map((e) => e.code)).toContain('BAD_ENTRY_HASH');
  });

  it('re-derives the control totals from the fixed-width fields of the NACHA record layouts', () => {
    const entries = manyEntries(57);
    const overrides = { batchNumber: 7, fileIdModifier: 'B', companyDescriptiveDate: '2026-03-13' };
    const { content } = buildNachaFile(fileInput(entries, overrides));
    const lines = content.split('\n');
    const [header, batchHeader] = [lines[0]!, lines[1]!];
    const details = lines.filter((l) => l[0] === '6');
    const batchControl = lines.find((l) => l[0] === '8')!;
    const fileControl = lines.find((l) => l[0] === '9' && l !== '9'.repeat(94))!;

    // File header (positions 1-based in the NACHA table, 0-based here).
    expect(header.slice(1, 3)).toBe('01');
    expect(header.slice(3, 13)).toBe(' 021000021');
    expect(header.slice(33, 34)).toBe('B');
    expect(header.slice(34, 40)).toBe('094101'); // record size 094, blocking factor 10, format code 1
    // Batch header.
    expect(batchHeader.slice(1, 4)).toBe('220');
    expect(batchHeader.slice(50, 53)).toBe('PPD');
    expect(batchHeader.slice(63, 69)).toBe('260313'); // descriptive date
    expect(batchHeader.slice(69, 75)).toBe('260316'); // effective entry date
    expect(batchHeader.slice(75, 79)).toBe('   1'); // settlement date blank, originator status 1
    expect(batchHeader.slice(87, 94)).toBe('0000007');

    let hash = 0n;
    let credit = 0n;
    details.forEach((d, i) => {
      const e = entries[i]!;
      expect(d.slice(1, 3)).toBe(e.accountType === 'checking' ? '22' : '32');
      expect(d.slice(3, 12)).toBe(e.routingNumber);
      expect(d.slice(12, 29).trimEnd()).toBe(e.accountNumber);
      expect(Number(d.slice(29, 39))).toBe(e.amountCents);
      expect(d.slice(78, 79)).toBe('0');
      hash += BigInt(d.slice(3, 11));
      credit += BigInt(d.slice(29, 39));
    });
    const hash10 = (hash % 10_000_000_000n).toString().padStart(10, '0');
    const credit12 = credit.toString().padStart(12, '0');

    expect(batchControl.slice(1, 4)).toBe('220');
    expect(batchControl.slice(4, 10)).toBe('000057');
    expect(batchControl.slice(10, 20)).toBe(hash10);
    expect(batchControl.slice(20, 32)).toBe('0'.repeat(12));
    expect(batchControl.slice(32, 44)).toBe(credit12);
    expect(batchControl.slice(44, 54)).toBe(batchHeader.slice(40, 50)); // company identification matches the header
    expect(batchControl.slice(54, 79)).toBe(' '.repeat(25)); // message authentication code and reserved
    expect(batchControl.slice(79, 94)).toBe(batchHeader.slice(79, 94)); // ODFI and batch number match the header

    expect(fileControl.slice(1, 7)).toBe('000001');
    expect(fileControl.slice(7, 13)).toBe(String(lines.length / 10).padStart(6, '0'));
    expect(fileControl.slice(13, 21)).toBe('00000057');
    expect(fileControl.slice(21, 31)).toBe(hash10);
    expect(fileControl.slice(31, 43)).toBe('0'.repeat(12));
    expect(fileControl.slice(43, 55)).toBe(credit12);
    expect(fileControl.slice(55)).toBe(' '.repeat(39));
  });

  it('truncates the entry hash to its rightmost 10 digits on a 25,000-entry payroll', () => {
    const entries = manyEntries(25_000);
    const { content, control } = buildNachaFile(fileInput(entries));

    const sum = entries.reduce((acc, e) => acc + BigInt(e.routingNumber.slice(0, 8)), 0n);
    expect(sum.toString().length).toBeGreaterThan(10); // the truncation is really exercised
    expect(control.entryHash).toBe((sum % 10n ** 10n).toString().padStart(10, '0'));
    const credits = entries.reduce((acc, e) => acc + BigInt(e.amountCents), 0n);
    expect(BigInt(control.totalCreditCents)).toBe(credits);
    expect(control.entryAddendaCount).toBe(25_000);
    expect(control.blockCount).toBe(2_501); // 25,004 records padded to 25,010

    expect(validate(content)).toEqual({ ok: true, errors: [] });
    const parsed = parse(content);
    const batch = parsed.batches[0]!;
    expect(batch.entries).toHaveLength(25_000);
    expect(
      batch.entries.every(
        (p, i) =>
          p.amountCents === entries[i]!.amountCents &&
          p.routing === entries[i]!.routingNumber &&
          p.account === entries[i]!.accountNumber,
      ),
    ).toBe(true);
    expect(parsed.control?.entryHash).toBe(control.entryHash);
  });

  it('is deterministic: the same input, or the same entries built in parallel chunks, give identical bytes', async () => {
    const entries = manyEntries(1_000);
    const whole = buildNachaFile(fileInput(entries)).content;
    expect(buildNachaFile(fileInput(entries)).content).toBe(whole);

    const chunks = [entries.slice(0, 333), entries.slice(333, 700), entries.slice(700)];
    const built = await Promise.all(chunks.map(async (chunk) => chunk.map((e) => entryDetailRecord(ODFI, e))));
    expect(buildNachaFile({ ...fileInput([]), entries: built.flat() }).content).toBe(whole);
  });

  describe('writes the creation date and time in New York whatever the machine time zone', () => {
    const saved = process.env.TZ;
    afterEach(() => {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    });

    it.each(['UTC', 'America/Los_Angeles', 'Asia/Tokyo'])('in %s', (tz) => {
      process.env.TZ = tz;
      const { content } = buildNachaFile(fileInput(three, { fileCreation: new Date('2026-12-31T23:59:59.999Z') }));
      expect(content.slice(23, 33)).toBe('2612311859');
      // After 7 pm Eastern the UTC date is already tomorrow: the header keeps the bank's today.
      const evening = buildNachaFile(fileInput(three, { fileCreation: new Date('2026-11-26T01:30:00Z') })).content;
      expect(evening.slice(23, 33)).toBe('2611252030');
      const summer = buildNachaFile(fileInput(three, { fileCreation: new Date('2026-07-01T03:59:00Z') })).content;
      expect(summer.slice(23, 33)).toBe('2606302359');
    });
  });

  it('accepts gaps in the trace sequence (employees with no net pay are skipped by the caller)', () => {
    const gappy = three.map((e, i) => ({ ...e, traceSequence: [2, 5, 9][i]! }));
    const { content } = buildNachaFile(fileInput(gappy));
    expect(validate(content).ok).toBe(true);
    expect(parse(content).batches[0]!.entries.map((e) => e.traceNumber.slice(8))).toEqual([
      '0000002',
      '0000005',
      '0000009',
    ]);
  });

  it('refuses a file with no entries: the caller never builds one', () => {
    expect(() => buildNachaFile(fileInput([]))).toThrow(/at least one entry/);
  });

  it(`refuses more than ${MAX_ENTRIES} entries, the most one batch control can count`, () => {
    const one = entryDetailRecord(ODFI, three[0]!);
    const tooMany = new Array<string>(MAX_ENTRIES + 1).fill(one);
    expect(() => buildNachaFile({ ...fileInput([]), entries: tooMany })).toThrow(/at most 999999/);
  });

  it('refuses entries out of trace order, duplicated, from another ODFI or not built by entryDetailRecord', () => {
    const [a, b] = [entryDetailRecord(ODFI, three[0]!), entryDetailRecord(ODFI, three[1]!)];
    expect(() => buildNachaFile({ ...fileInput([]), entries: [b, a] })).toThrow(/trace sequence 1 is not after 2/);
    expect(() => buildNachaFile({ ...fileInput([]), entries: [a, a] })).toThrow(/not after/);
    expect(() => buildNachaFile({ ...fileInput([]), entries: [entryDetailRecord('12345678', three[0]!)] })).toThrow(
      /ODFI/,
    );
    expect(() => buildNachaFile({ ...fileInput([]), entries: [a.slice(0, 93)] })).toThrow(/entry record 1/);
    // A return's code (21) is not an entry this writer makes.
    expect(() => buildNachaFile({ ...fileInput([]), entries: [`621${a.slice(3)}`] })).toThrow(/entry record 1/);
  });

  it('refuses totals that overflow the 12-digit control field', () => {
    const big = Array.from({ length: 101 }, (_, i) => ({
      ...three[0]!,
      amountCents: MAX_ENTRY_CENTS,
      traceSequence: i + 1,
    }));
    expect(() => buildNachaFile(fileInput(big))).toThrow(/12-digit/);
    // 99 of them still fit: 989,999,999,901 cents.
    expect(buildNachaFile(fileInput(big.slice(0, 99))).control.totalCreditCents).toBe(989_999_999_901);
  });

  it.each<[string, Partial<NachaFileInput>, RegExp]>([
    ['an impossible effective date', { effectiveEntryDate: '2026-02-30' }, /effective entry date/],
    ['an effective date in another format', { effectiveEntryDate: '03/16/2026' }, /effective entry date/],
    ['an invalid creation time', { fileCreation: new Date('nope') }, /file creation/],
    ['a lowercase file id modifier', { fileIdModifier: 'a' }, /file id modifier/],
    ['batch number 0', { batchNumber: 0 }, /batch number/],
    ['a blank entry description', { companyEntryDescription: '  ' }, /company entry description/],
    ['a 7-digit ODFI', { originator: { ...originator, originating_dfi_identification: '0210000' } }, /originating DFI/],
    [
      'an 8-digit destination',
      { originator: { ...originator, immediate_destination: '02100002' } },
      /immediate destination/,
    ],
    [
      'an origin of 11 characters',
      { originator: { ...originator, immediate_origin: '12345678901' } },
      /immediate origin/,
    ],
    ['a blank company name', { originator: { ...originator, company_name: '!!!' } }, /company name/],
    ['a blank company id', { originator: { ...originator, company_identification: '' } }, /company identification/],
  ])('refuses %s', (_label, overrides, message) => {
    expect(() => buildNachaFile(fileInput(three, overrides))).toThrow(message);
  });

  it('accepts a 9-digit immediate origin (written blank + routing) and a free-text descriptive date', () => {
    const { content } = buildNachaFile(
      fileInput(three, {
        originator: { ...originator, immediate_origin: '021000021' },
        companyDescriptiveDate: 'Mar 16',
      }),
    );
    expect(content.slice(13, 23)).toBe(' 021000021');
    expect(content.split('\n')[1]!.slice(63, 69)).toBe('MAR 16');
    expect(validate(content).ok).toBe(true);
  });
});

describe('NACHA balanced file (offset debit to the funding account)', () => {
  const offset = {
    routingNumber: '011000015',
    accountNumber: '99887766554433',
    accountType: 'checking' as const,
    traceSequence: 4,
  };

  it('writes a mixed batch (200) ending in one debit for the total credits, byte for byte', () => {
    const { content, control } = buildNachaFile(fileInput(three, { offset }));
    const lines = content.split('\n');
    expect(lines[1]!.slice(1, 4)).toBe('200');
    // Entry hash: 15410518 (the credits) + 01100001 (the funding account's bank) = 16510519.
    expect(lines[5]).toBe(
      '6' +
        '27' +
        '01100001' +
        '5' +
        '99887766554433   ' +
        '0000373555' +
        '1234567890     ' +
        'ACME PAYROLL INC      ' +
        '  ' +
        '0' +
        '021000020000004',
    );
    expect(lines[6]).toBe(
      '8' +
        '200' +
        '000004' +
        '0016510519' +
        '000000373555' +
        '000000373555' +
        '1234567890' +
        ' '.repeat(19) +
        ' '.repeat(6) +
        '02100002' +
        '0000001',
    );
    expect(lines[7]).toBe(`9000001000001000000040016510519000000373555000000373555${' '.repeat(39)}`);
    expect(control).toEqual({
      batchCount: 1,
      blockCount: 1,
      entryAddendaCount: 4,
      entryHash: '0016510519',
      totalDebitCents: 373_555,
      totalCreditCents: 373_555,
    });
  });

  it("is read back alike by two independent parsers and meets the bank's rules: debits equal credits", () => {
    const { content } = buildNachaFile(fileInput(three, { offset: { ...offset, accountType: 'savings' } }));
    const file = readNacha(content);
    assertBankRules(file, {
      payDate: '2026-03-16',
      balanced: true,
      fundingAccount: { routing: offset.routingNumber, account: offset.accountNumber, accountType: 'savings' },
    });
    expect(file.batches[0]!.entries.at(-1)!.transactionCode).toBe(37);
    // Without a funding account the same entries make a credits-only file.
    assertBankRules(readNacha(buildNachaFile(fileInput(three)).content), { payDate: '2026-03-16', balanced: false });
  });

  it("offsets credits above one entry's $99,999,999.99 with several debits, consecutive traces, still balanced", () => {
    const big = three.map((e) => ({ ...e, amountCents: 6_000_000_000 }));
    const { content, control } = buildNachaFile(fileInput(big, { offset }));
    const file = readNacha(content);
    assertBankRules(file, {
      payDate: '2026-03-16',
      balanced: true,
      fundingAccount: { routing: offset.routingNumber, account: offset.accountNumber, accountType: 'checking' },
    });
    const debits = file.batches[0]!.entries.filter((e) => e.transactionCode === 27);
    expect(debits.map((e) => [e.amountCents, e.traceNumber.slice(8)])).toEqual([
      [9_999_999_999, '0000004'],
      [8_000_000_001, '0000005'],
    ]);
    expect(control).toMatchObject({
      entryAddendaCount: 5,
      totalDebitCents: 18_000_000_000,
      totalCreditCents: 18_000_000_000,
    });
  });

  it('refuses an offset whose trace does not follow every credit, and a funding account with a bad routing number', () => {
    expect(() => buildNachaFile(fileInput(three, { offset: { ...offset, traceSequence: 3 } }))).toThrow(/offset/);
    expect(() => buildNachaFile(fileInput(three, { offset: { ...offset, routingNumber: '011000016' } }))).toThrow(
      /routing/,
    );
  });
});
