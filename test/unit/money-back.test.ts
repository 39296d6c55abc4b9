import { describe, expect, it } from 'vitest';
import {
  buildNachaFile,
  entryDetailRecord,
  entryRecordsOf,
  NachaFormatError,
  reissuedEntry,
} from '../../shared/adapters/nacha.js';
import {
  FUNDING_TRANSITIONS,
  fundingMay,
  nextSettlement,
  redebitRefusal,
  reversalWindowEnds,
} from '../../shared/domain/money-back.js';
import { CREATED, ODFI, originator, three } from '../fixtures/nacha-entries.js';
import { isFedBankingDay } from '../support/fed-closures.js';
import { readNacha } from '../support/nacha-check.js';

/*
 * The rules of money coming back (CONTRACT §12), written out here from the NACHA rules and the contract rather than
 * read from the declarations they check: re-debits (R01/R09, twice, 180 days), the five-banking-day reversal window,
 * and the files a reversal and a re-debit are (read back by the two independent parsers).
 */

describe('the funding debit lifecycle', () => {
  it('is returned from scheduled or a re-debit; re-debited or resolved only when returned', () => {
    expect(fundingMay('scheduled', 'return')).toBe(true);
    expect(fundingMay('redebit_scheduled', 'return')).toBe(true);
    expect(fundingMay('returned', 'return')).toBe(false);
    expect(fundingMay('resolved', 'return')).toBe(false);
    for (const status of ['scheduled', 'redebit_scheduled', 'resolved'] as const) {
      expect(fundingMay(status, 'redebit')).toBe(false);
      expect(fundingMay(status, 'resolve')).toBe(false);
    }
    expect(fundingMay('returned', 'redebit')).toBe(true);
    expect(fundingMay('returned', 'resolve')).toBe(true);
    expect(Object.keys(FUNDING_TRANSITIONS).sort()).toEqual(['redebit', 'resolve', 'return']);
  });

  const returned = { status: 'returned' as const, effective_entry_date: '2026-11-20', return_code: 'R01', redebits: 0 };
  it('re-debits a debit returned R01 or R09, at most twice, within 180 days of its settlement', () => {
    expect(redebitRefusal(returned, '2026-11-23')).toBeUndefined();
    expect(redebitRefusal({ ...returned, return_code: 'R09', redebits: 1 }, '2026-11-23')).toBeUndefined();
    for (const code of ['R02', 'R03', 'R04', 'R10', 'R16', 'R29'])
      expect(redebitRefusal({ ...returned, return_code: code }, '2026-11-23')).toBe('return_code');
    expect(redebitRefusal({ ...returned, redebits: 2 }, '2026-11-23')).toBe('limit_reached');
    // 2026-11-20 + 180 days = 2027-05-19: the last day allowed.
    expect(redebitRefusal(returned, '2027-05-19')).toBeUndefined();
    expect(redebitRefusal(returned, '2027-05-20')).toBe('window_closed');
    expect(redebitRefusal({ ...returned, status: 'scheduled' }, '2026-11-23')).toBe('not_returned');
    expect(redebitRefusal({ ...returned, status: 'redebit_scheduled' }, '2026-11-23')).toBe('not_returned');
  });
});

describe('the reversal window', () => {
  it('ends on the fifth banking day after settlement, skipping weekends and Federal Reserve holidays', () => {
    // Friday 2026-11-20: Mon 23, Tue 24, Wed 25, (Thanksgiving 26), Fri 27, Mon 30.
    expect(reversalWindowEnds('2026-11-20')).toBe('2026-11-30');
    // Wednesday 2026-12-23: Thu 24, (Christmas 25), Mon 28, Tue 29, Wed 30, Thu 31.
    expect(reversalWindowEnds('2026-12-23')).toBe('2026-12-31');
    for (const day of ['2026-11-30', '2026-12-31']) expect(isFedBankingDay(day)).toBe(true);
  });

  it('a file written now reaches the bank today before the cut-off, else the next banking day, and settles the banking day after', () => {
    const at = (date: string, time: string) => ({ date, time });
    expect(nextSettlement(at('2026-11-24', '10:00'), '15:00')).toEqual({
      release_by: '2026-11-24',
      effective_entry_date: '2026-11-25',
    });
    // Past the cut-off: tomorrow's file.
    expect(nextSettlement(at('2026-11-24', '15:00'), '15:00')).toEqual({
      release_by: '2026-11-25',
      effective_entry_date: '2026-11-27',
    });
    // Wednesday before Thanksgiving: settles Friday.
    expect(nextSettlement(at('2026-11-25', '09:00'), '15:00')).toEqual({
      release_by: '2026-11-25',
      effective_entry_date: '2026-11-27',
    });
    // Saturday: reaches the bank Monday, settles Tuesday.
    expect(nextSettlement(at('2026-11-28', '09:00'), '15:00')).toEqual({
      release_by: '2026-11-30',
      effective_entry_date: '2026-12-01',
    });
  });

  it('a reversal never settles before the deposit it takes back', () => {
    // The deposit settles Friday 2026-12-18: the reversal settles that day too, released the day before.
    expect(nextSettlement({ date: '2026-11-24', time: '10:00' }, '15:00', '2026-12-18')).toEqual({
      release_by: '2026-12-17',
      effective_entry_date: '2026-12-18',
    });
    // A deposit already settled does not hold it back.
    expect(nextSettlement({ date: '2026-11-24', time: '10:00' }, '15:00', '2026-11-20')).toEqual({
      release_by: '2026-11-24',
      effective_entry_date: '2026-11-25',
    });
  });
});

describe('files that take money back', () => {
  const credits = three.map((e) => entryDetailRecord(ODFI, e));
  const payroll = buildNachaFile({
    originator,
    fileCreation: CREATED,
    effectiveEntryDate: '2026-03-16',
    companyEntryDescription: 'PAYROLL',
    entries: credits,
    offset: { routingNumber: '021000021', accountNumber: '000123456789', accountType: 'checking', traceSequence: 4 },
  });
  const written = entryRecordsOf(payroll.content);

  it('a reversal debits each deposit back (22 → 27, 32 → 37), same bank, account, amount, id and name, and credits the funding account', () => {
    const originals = [...written.values()].filter((r) => r[1] === '2' || r[1] === '3').slice(0, 3);
    const reversal = buildNachaFile({
      originator,
      fileCreation: CREATED,
      effectiveEntryDate: '2026-03-17',
      companyEntryDescription: 'REVERSAL',
      entries: originals.map((r, i) => reissuedEntry(r, ODFI, 10 + i, true)),
      offset: { routingNumber: '021000021', accountNumber: '000123456789', accountType: 'checking', traceSequence: 13 },
    });
    const read = readNacha(reversal.content);
    const batch = read.batches[0]!;
    expect(batch.serviceClass).toBe(200);
    expect(batch.description).toBe('REVERSAL');
    const before = readNacha(payroll.content).batches[0]!.entries;
    for (const [i, e] of batch.entries.slice(0, 3).entries()) {
      const original = before[i]!;
      expect(e.transactionCode).toBe(original.transactionCode === 22 ? 27 : 37);
      expect({ ...e, transactionCode: 0, traceNumber: '' }).toEqual({
        ...original,
        transactionCode: 0,
        traceNumber: '',
      });
      expect(e.traceNumber).toBe(`${ODFI}${String(10 + i).padStart(7, '0')}`);
    }
    const total = three.reduce((sum, e) => sum + e.amountCents, 0);
    expect(batch.entries[3]).toMatchObject({ transactionCode: 22, account: '000123456789', amountCents: total });
    expect(reversal.control).toMatchObject({ totalDebitCents: total, totalCreditCents: total });
  });

  it('a re-debit repeats the offset debit under a new trace in a CCD batch of debits only (225)', () => {
    const offset = [...written.values()].find((r) => r.startsWith('627'))!;
    const redebit = buildNachaFile({
      originator,
      fileCreation: CREATED,
      effectiveEntryDate: '2026-03-18',
      companyEntryDescription: 'RETRY PYMT',
      secCode: 'CCD',
      entries: [reissuedEntry(offset, ODFI, 20, false)],
    });
    const batch = readNacha(redebit.content).batches[0]!;
    expect(batch).toMatchObject({ serviceClass: 225, sec: 'CCD', description: 'RETRY PYMT' });
    expect(batch.entries).toHaveLength(1);
    expect(batch.entries[0]).toMatchObject({ transactionCode: 27, account: '000123456789' });
    expect(redebit.control.totalCreditCents).toBe(0);
    expect(redebit.control.totalDebitCents).toBe(payroll.control.totalDebitCents);
  });

  it('reverses only a credit, and only an entry record', () => {
    const offset = [...written.values()].find((r) => r.startsWith('627'))!;
    expect(() => reissuedEntry(offset, ODFI, 30, true)).toThrow(NachaFormatError);
    expect(() => reissuedEntry('6'.repeat(94), ODFI, 30, true)).toThrow(NachaFormatError);
  });
});
