import { parse, validate, type ParsedFile } from 'achkit';
// @ts-expect-error -- node-nacha ships no types, and a `declare module` for an untyped package cannot live in a
// module file (TS2665); the minimal shape it is used through is declared below as `NodeNacha`.
import untypedNodeNacha from '@midlandsbank/node-nacha';
import { expect } from 'vitest';
import { isCalendarDate } from '../../shared/domain/dates.js';
import { MAX_ENTRY_CENTS } from '../../shared/domain/disbursement.js';
import { isFedBankingDay, lastFedBankingDayOnOrBefore } from './fed-closures.js';

/*
 * Reads a NACHA file the way a bank would, with two parsers written by different people, and checks the rules
 * the ODFI applies to a payroll file. Two parsers because each has blind spots: achkit's validator reconciles
 * counts, hashes and totals but silently drops non-digits from numeric fields and never reads a batch control's
 * service class, company id, ODFI or batch number; node-nacha reads every field but validates nothing. A file
 * both read identically, that achkit's validator accepts, is what the tests trust.
 */

// ---------------------------------------------------------------------------------------------------------------
// The normalized reading both parsers are mapped to.

export interface ReadHeader {
  /** 9 digits: the leading blank of the 10-character field is dropped. */
  immediateDestination: string;
  /** The 10-character field, trimmed. */
  immediateOrigin: string;
  /** YYYY-MM-DD. */
  creationDate: string;
  /** HHMM. */
  creationTime: string;
  fileIdModifier: string;
}

export interface ReadEntry {
  transactionCode: number;
  /** 9 digits: the 8-digit RDFI identification and its check digit. */
  routing: string;
  account: string;
  amountCents: number;
  individualId: string;
  individualName: string;
  /** 15 digits. */
  traceNumber: string;
}

export interface ReadBatchControl {
  entryAddendaCount: number;
  /** 10 digits, leading zeros kept. */
  entryHash: string;
  totalDebitCents: number;
  totalCreditCents: number;
}

export interface ReadBatch {
  serviceClass: number;
  companyName: string;
  companyId: string;
  sec: string;
  description: string;
  /** YYYY-MM-DD. */
  effectiveEntryDate: string;
  /** 8 digits. */
  odfi: string;
  batchNumber: number;
  entries: ReadEntry[];
  control: ReadBatchControl;
}

export interface ReadFileControl extends ReadBatchControl {
  batchCount: number;
  blockCount: number;
}

export interface ReadFile {
  header: ReadHeader;
  batches: ReadBatch[];
  control: ReadFileControl;
}

export interface BankRulesExpectation {
  /** YYYY-MM-DD: the day employees are paid. */
  payDate: string;
  /** True for a mixed batch (200) ending with the offset debit to `fundingAccount`; false for credits only (220). */
  balanced: boolean;
  fundingAccount?: { routing: string; account: string; accountType: 'checking' | 'savings' };
}

// ---------------------------------------------------------------------------------------------------------------
// node-nacha: the fields it yields, from lib/transforms/formats.js. Fields marked `numeric` there come back as
// JavaScript numbers (leading zeros lost, NaN when not digits); all fields but destination, origin and the two
// company ids are trimmed.

interface NodeNachaEntry {
  transactionCode: string;
  receivingDFIIdentification: number;
  checkDigit: number;
  dfiAccount: string;
  amount: number;
  identificationNumber: string;
  receivingCompanyName: string;
  traceNumber: number;
}

interface NodeNachaBatchFooter {
  serviceClassCode: number;
  entryAndAddendaCount: number;
  entryHash: number;
  totalDebit: number;
  totalCredit: number;
  companyId: string;
  originatingDFIIdentification: string;
  num: number;
}

interface NodeNachaBatch {
  serviceClassCode: number;
  companyName: string;
  companyId: string;
  entryClassCode: string;
  description: string;
  effectiveDate: string;
  originatingDFIIdentification: string;
  num: number;
  entries: NodeNachaEntry[];
  footer?: NodeNachaBatchFooter;
}

interface NodeNachaFile {
  file?: {
    destination: string;
    origin: string;
    creationDate: string;
    creationTime: string;
    idModifier: string;
    footer?: {
      batchCount: number;
      blockCount: number;
      entryAndAddendaCount: number;
      entryHash: number;
      totalDebit: number;
      totalCredit: number;
    };
  };
  batches?: NodeNachaBatch[];
}

interface NodeNacha {
  from(content: string): { data: NodeNachaFile };
}

const nodeNacha = untypedNodeNacha as NodeNacha;

// ---------------------------------------------------------------------------------------------------------------
// Normalizing each parser's result. Every string is trimmed on both sides so padding never counts as a
// disagreement, while a real difference in content always does.

function isoDate(yymmdd: string, parser: string, what: string): string {
  // Both parsers hand back the raw YYMMDD; converting here (20YY: payroll files are from this century) lets the
  // bank rules compare dates with the banking calendar's YYYY-MM-DD.
  const v = yymmdd.trim();
  const iso = `20${v.slice(0, 2)}-${v.slice(2, 4)}-${v.slice(4, 6)}`;
  if (!/^\d{6}$/.test(v) || !isCalendarDate(iso)) {
    throw new Error(`${parser}: ${what} '${yymmdd}' is not a YYMMDD date`);
  }
  return iso;
}

/** A number node-nacha read from a zero-filled field, back as the field's digits; anything else shown as is. */
function digits(value: number, width: number): string {
  return Number.isSafeInteger(value) && value >= 0 ? String(value).padStart(width, '0') : String(value);
}

/** achkit's `parse` result as a ReadFile; throws when a control record the ReadFile needs is missing. */
export function fromAchkit(parsed: ParsedFile): ReadFile {
  const control = parsed.control;
  if (!control) throw new Error('achkit: the file has no file control (9) record');
  return {
    header: {
      immediateDestination: parsed.destinationRouting.trim(),
      immediateOrigin: parsed.originRouting.trim(),
      creationDate: isoDate(parsed.creationDate, 'achkit', 'file creation date'),
      creationTime: parsed.creationTime.trim(),
      fileIdModifier: parsed.fileIdModifier.trim(),
    },
    batches: parsed.batches.map((b, i) => {
      if (!b.control) throw new Error(`achkit: batch ${i + 1} has no batch control (8) record`);
      return {
        serviceClass: b.serviceClass,
        companyName: b.companyName.trim(),
        companyId: b.companyId.trim(),
        sec: b.sec.trim(),
        description: b.description.trim(),
        effectiveEntryDate: isoDate(b.effectiveDate, 'achkit', `batch ${i + 1} effective entry date`),
        odfi: b.originDfi.trim(),
        batchNumber: b.batchNumber,
        entries: b.entries.map((e) => ({
          transactionCode: e.txnCode,
          routing: e.routing.trim(),
          account: e.account.trim(),
          amountCents: e.amountCents,
          individualId: e.idNumber.trim(),
          individualName: e.name.trim(),
          traceNumber: e.traceNumber.trim(),
        })),
        control: {
          entryAddendaCount: b.control.entryAddendaCount,
          entryHash: b.control.entryHash.trim(),
          totalDebitCents: b.control.totalDebit,
          totalCreditCents: b.control.totalCredit,
        },
      };
    }),
    control: {
      batchCount: control.batchCount,
      blockCount: control.blockCount,
      entryAddendaCount: control.entryAddendaCount,
      entryHash: control.entryHash.trim(),
      totalDebitCents: control.totalDebit,
      totalCreditCents: control.totalCredit,
    },
  };
}

/** node-nacha's `from(content).data` as a ReadFile; throws when a record the ReadFile needs is missing. */
export function fromNodeNacha(data: NodeNachaFile): ReadFile {
  const file = data.file;
  if (!file) throw new Error('node-nacha: the file has no file header (1) record');
  const footer = file.footer;
  if (!footer) throw new Error('node-nacha: the file has no file control (9) record');
  return {
    header: {
      immediateDestination: file.destination.trim(),
      immediateOrigin: file.origin.trim(),
      creationDate: isoDate(file.creationDate, 'node-nacha', 'file creation date'),
      creationTime: file.creationTime.trim(),
      fileIdModifier: file.idModifier.trim(),
    },
    batches: (data.batches ?? []).map((b, i) => {
      if (!b.footer) throw new Error(`node-nacha: batch ${i + 1} has no batch control (8) record`);
      return {
        serviceClass: b.serviceClassCode,
        companyName: b.companyName.trim(),
        companyId: b.companyId.trim(),
        sec: b.entryClassCode.trim(),
        description: b.description.trim(),
        effectiveEntryDate: isoDate(b.effectiveDate, 'node-nacha', `batch ${i + 1} effective entry date`),
        odfi: b.originatingDFIIdentification.trim(),
        batchNumber: b.num,
        entries: b.entries.map((e) => ({
          transactionCode: Number(e.transactionCode),
          // node-nacha splits the routing number and reads the 8-digit part as a number: 02100002 → 2100002.
          routing: digits(e.receivingDFIIdentification, 8) + digits(e.checkDigit, 1),
          account: e.dfiAccount.trim(),
          amountCents: e.amount,
          individualId: e.identificationNumber.trim(),
          individualName: e.receivingCompanyName.trim(),
          traceNumber: digits(e.traceNumber, 15),
        })),
        control: {
          entryAddendaCount: b.footer.entryAndAddendaCount,
          entryHash: digits(b.footer.entryHash, 10),
          totalDebitCents: b.footer.totalDebit,
          totalCreditCents: b.footer.totalCredit,
        },
      };
    }),
    control: {
      batchCount: footer.batchCount,
      blockCount: footer.blockCount,
      entryAddendaCount: footer.entryAndAddendaCount,
      entryHash: digits(footer.entryHash, 10),
      totalDebitCents: footer.totalDebit,
      totalCreditCents: footer.totalCredit,
    },
  };
}

/** Reads `content` with achkit's parser alone (no validation). */
export function readWithAchkit(content: string): ReadFile {
  return fromAchkit(parse(content));
}

function nodeNachaData(content: string): NodeNachaFile {
  try {
    return nodeNacha.from(content).data;
  } catch (error) {
    // It throws bare TypeErrors on, e.g., an entry before any batch header or an SEC code it has no layout for.
    throw new Error(`node-nacha could not read the file: ${(error as Error).message}`);
  }
}

/** Reads `content` with node-nacha's parser alone (it validates nothing). */
export function readWithNodeNacha(content: string): ReadFile {
  return fromNodeNacha(nodeNachaData(content));
}

// ---------------------------------------------------------------------------------------------------------------
// Cross-parser comparison.

/**
 * Every place two readings differ, as 'path: left vs right'. Generic over the structure rather than field by
 * field, so a field added to ReadFile is compared without anyone remembering to add it here.
 */
export function parserDisagreements(left: ReadFile, right: ReadFile): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) out.push(`${path}.length: ${a.length} vs ${b.length}`);
      for (let i = 0; i < Math.min(a.length, b.length); i++) walk(a[i], b[i], `${path}[${i}]`);
    } else if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const key of keys) {
        walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], path ? `${path}.${key}` : key);
      }
    } else if (!Object.is(a, b)) {
      out.push(`${path}: ${JSON.stringify(a) ?? String(a)} vs ${JSON.stringify(b) ?? String(b)}`);
    }
  };
  walk(left, right, '');
  return out;
}

/** Throws an Error naming every field on which achkit's and node-nacha's readings differ. */
export function assertParsersAgree(viaAchkit: ReadFile, viaNodeNacha: ReadFile): void {
  const differences = parserDisagreements(viaAchkit, viaNodeNacha);
  if (differences.length > 0) {
    throw new Error(
      `NACHA parsers disagree (achkit vs node-nacha) on ${differences.length} field(s):\n  ${differences.join('\n  ')}`,
    );
  }
}

/**
 * NACHA requires a batch control to repeat its header's service class, company id, ODFI and batch number.
 * achkit reads none of these from the control record and its validator cannot see them: node-nacha does.
 */
function batchControlMismatches(data: NodeNachaFile): string[] {
  const out: string[] = [];
  (data.batches ?? []).forEach((b, i) => {
    const f = b.footer;
    if (!f) return; // reported by fromNodeNacha
    const pairs: Array<[string, unknown, unknown]> = [
      ['service class', b.serviceClassCode, f.serviceClassCode],
      ['company id', b.companyId.trim(), f.companyId.trim()],
      ['ODFI', b.originatingDFIIdentification, f.originatingDFIIdentification],
      ['batch number', b.num, f.num],
    ];
    for (const [what, header, control] of pairs) {
      if (!Object.is(header, control)) {
        out.push(`batch ${i + 1} ${what}: header ${String(header)}, control ${String(control)}`);
      }
    }
  });
  return out;
}

/**
 * Parses `content` with achkit (whose validator must report no error) and with node-nacha, and returns the
 * reading once both agree on every field. Throws an Error describing the first kind of failure found.
 */
export function readNacha(content: string): ReadFile {
  const validation = validate(content);
  if (validation.ok !== true || validation.errors.length > 0) {
    throw new Error(
      `achkit's validator rejects the NACHA file:\n  ` +
        validation.errors.map((e) => `${e.code} (${e.field}): ${e.message}`).join('\n  '),
    );
  }
  const viaAchkit = readWithAchkit(content);
  const data = nodeNachaData(content);
  const viaNodeNacha = fromNodeNacha(data);
  assertParsersAgree(viaAchkit, viaNodeNacha);
  const mismatches = batchControlMismatches(data);
  if (mismatches.length > 0) {
    throw new Error(`NACHA batch control records do not match their headers:\n  ${mismatches.join('\n  ')}`);
  }
  return viaAchkit;
}

// ---------------------------------------------------------------------------------------------------------------
// The bank's rules.

const CHECKING_CREDIT = 22;
const SAVINGS_CREDIT = 32;
const PRENOTE_CREDITS = [23, 33];
const DEBIT_CODE = { checking: 27, savings: 37 } as const;
const CREDITS_ONLY = 220;
const MIXED = 200;
/** The characters every ODFI accepts in a name or id; written out here, not taken from the writer it checks. */
const ACH_TEXT = /^[A-Z0-9 &'\-.,/]*$/;

function sum(values: readonly number[]): number {
  return values.reduce((acc, v) => acc + v, 0);
}

/**
 * Checks a read file against the ODFI's rules for a payroll file paid on `expected.payDate`. Uses vitest's
 * expect, so a failure names the rule and the batch or entry that broke it.
 */
export function assertBankRules(file: ReadFile, expected: BankRulesExpectation): void {
  // From the hand-written table of Fed closures, not from the calendar the file was written with.
  const settlement = lastFedBankingDayOnOrBefore(expected.payDate);
  const funding = expected.fundingAccount;
  if (expected.balanced && !funding) throw new Error('assertBankRules: a balanced file needs expected.fundingAccount');
  // What the offset debit must look like, when there is one.
  const offset =
    expected.balanced && funding
      ? { transactionCode: DEBIT_CODE[funding.accountType], routing: funding.routing, account: funding.account }
      : undefined;
  expect(file.batches.length, 'the file has at least one batch').toBeGreaterThan(0);
  let fileCredits = 0;
  let fileDebits = 0;

  file.batches.forEach((batch, bi) => {
    const where = `batch ${bi + 1}`;
    const date = batch.effectiveEntryDate;
    // Each of the three date rules separately, so a failure says which one: the last one implies the others,
    // but "not 2026-03-13" says less than "a Saturday".
    expect(isFedBankingDay(date), `${where}: effective entry date ${date} is a banking day`).toBe(true);
    const onOrBefore = `${where}: effective entry date ${date} is on or before pay date ${expected.payDate}`;
    expect(date <= expected.payDate, onOrBefore).toBe(true);
    expect(date, `${where}: effective entry date is the last banking day on or before ${expected.payDate}`).toBe(
      settlement,
    );

    batch.entries.forEach((e, ei) => {
      const who = `${where} entry ${ei + 1} (trace ${e.traceNumber})`;
      expect(ACH_TEXT.test(e.individualName), `${who}: name '${e.individualName}' is ACH text`).toBe(true);
      expect(e.individualName.trim(), `${who}: PPD requires the receiver's name`).not.toBe('');
      expect(ACH_TEXT.test(e.individualId), `${who}: individual id '${e.individualId}' is ACH text`).toBe(true);
      // A prenote would carry no money and delay the real credit by the prenote waiting period.
      expect(PRENOTE_CREDITS, `${who}: no prenote`).not.toContain(e.transactionCode);
    });
    expect(batch.entries.length, `${where}: has entries`).toBeGreaterThan(0);

    // Shape first (service class, where the debit is), then amounts: checking a sum against entries that are not
    // what they should be would fail with a message that hides the real fault.
    let credits = batch.entries;
    let debits: ReadEntry[] = [];
    if (offset) {
      expect(batch.serviceClass, `${where}: a balanced batch is mixed debits and credits (service class 200)`).toBe(
        MIXED,
      );
      expect(
        batch.entries.at(-1),
        `${where}: a balanced batch ends with its offset debit from the funding account`,
      ).toMatchObject(offset);
      // One offset, or several when the credits exceed what one entry's 10-digit amount carries.
      const firstDebit = batch.entries.findIndex((e) => e.transactionCode === offset.transactionCode);
      credits = batch.entries.slice(0, firstDebit);
      debits = batch.entries.slice(firstDebit);
      for (const d of debits) expect(d, `${where}: every offset debit is to the funding account`).toMatchObject(offset);
      expect(
        debits.slice(0, -1).every((d) => d.amountCents === MAX_ENTRY_CENTS),
        `${where}: only the last of several offsets is less than a full entry`,
      ).toBe(true);
      expect(credits.length, `${where}: a balanced batch has credits before its offset debit`).toBeGreaterThan(0);
    } else {
      expect(batch.serviceClass, `${where}: a credits-only batch (service class 220)`).toBe(CREDITS_ONLY);
    }
    for (const e of credits) {
      // In a credits-only batch this is also the "no debit" rule; in a balanced one, "the offset is the only debit".
      expect(
        [CHECKING_CREDIT, SAVINGS_CREDIT],
        `${where} trace ${e.traceNumber}: a checking or savings credit`,
      ).toContain(e.transactionCode);
    }

    const creditCents = sum(credits.map((e) => e.amountCents));
    expect(batch.control.totalCreditCents, `${where}: control total credit is the credits' sum`).toBe(creditCents);
    if (offset) {
      const debitCents = sum(debits.map((e) => e.amountCents));
      expect(debitCents, `${where}: the offset debits are exactly the batch's credits`).toBe(creditCents);
      expect(batch.control.totalDebitCents, `${where}: control total debit is the offset debit`).toBe(debitCents);
      expect(batch.control.totalDebitCents, `${where}: total debit equals total credit`).toBe(
        batch.control.totalCreditCents,
      );
    } else {
      expect(batch.control.totalDebitCents, `${where}: a credits-only batch debits nothing`).toBe(0);
    }
    fileCredits += batch.control.totalCreditCents;
    fileDebits += batch.control.totalDebitCents;
  });

  expect(file.control.totalCreditCents, "file control total credit is the batches' sum").toBe(fileCredits);
  expect(file.control.totalDebitCents, "file control total debit is the batches' sum").toBe(fileDebits);
  if (expected.balanced) {
    expect(file.control.totalDebitCents, 'file total debit equals total credit').toBe(file.control.totalCreditCents);
  } else {
    expect(file.control.totalDebitCents, 'a credits-only file debits nothing').toBe(0);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Rules across files.

function tracesOf(file: ReadFile): string[] {
  return file.batches.flatMap((b) => b.entries.map((e) => e.traceNumber));
}

/**
 * Trace numbers identify an entry to the bank for returns and corrections, across all of an originator's files:
 * unique everywhere, ascending within a file, and each file's range after the previous file's (files given in
 * the order they were written). 15-digit strings compare as numbers do.
 */
export function assertTracesAcrossFiles(files: readonly ReadFile[]): void {
  const seen = new Map<string, number>();
  let previousHighest: string | undefined;
  files.forEach((file, fi) => {
    const traces = tracesOf(file);
    expect(traces.length, `file ${fi + 1} has entries`).toBeGreaterThan(0);
    traces.forEach((trace, ti) => {
      expect(trace, `file ${fi + 1} trace ${ti + 1} is 15 digits`).toMatch(/^\d{15}$/);
      const earlier = seen.get(trace);
      expect(earlier, `trace ${trace} of file ${fi + 1} is not already in file ${String(earlier)}`).toBeUndefined();
      seen.set(trace, fi + 1);
      const before = traces[ti - 1];
      if (before !== undefined) {
        expect(trace > before, `file ${fi + 1}: trace ${trace} is after the one before it, ${before}`).toBe(true);
      }
    });
    const lowest = traces[0];
    if (previousHighest !== undefined && lowest !== undefined) {
      expect(
        lowest > previousHighest,
        `file ${fi + 1}'s lowest trace ${lowest} is after file ${fi}'s highest ` + `${previousHighest}`,
      ).toBe(true);
    }
    previousHighest = traces.at(-1) ?? previousHighest;
  });
}

/**
 * The ODFI rejects a file as a duplicate when another one has the same destination, origin, creation date and
 * file ID modifier: same-day files must differ in the modifier.
 */
export function assertDistinctModifiers(files: readonly ReadFile[]): void {
  const seen = new Map<string, number>();
  files.forEach((file, fi) => {
    const h = file.header;
    const key = [h.immediateDestination, h.immediateOrigin, h.creationDate, h.fileIdModifier].join('|');
    const earlier = seen.get(key);
    expect(
      earlier,
      `file ${fi + 1} (destination ${h.immediateDestination}, origin ${h.immediateOrigin}, ` +
        `created ${h.creationDate}, modifier ${h.fileIdModifier}) duplicates file ${String(earlier)}`,
    ).toBeUndefined();
    seen.set(key, fi + 1);
  });
}
