import { isValidRoutingNumber } from '../domain/aba.js';
import { ACH_CHARACTERS, achField, achText } from '../domain/ach-text.js';
import { BANK_TIME_ZONE, dateInTimeZone } from '../domain/banking-calendar.js';
import { isCalendarDate } from '../domain/dates.js';
import { MAX_ENTRY_CENTS, MAX_TOTAL_CENTS, MAX_TRACE_SEQUENCE, offsetEntryCount } from '../domain/disbursement.js';
import type { Originator } from '../domain/settings.js';

/**
 * NACHA ACH file writer: one batch (PPD, or CCD for the employer's own account) of credits (payroll direct deposit)
 * or of debits (reversals, re-debits), alone (service class 220 credits only, 225 debits only) or balanced by offset
 * entries to the employer's funding account (mixed, service class 200).
 *
 * Why hand-written rather than a library: the payroll is split into chunks whose entry records
 * are built in parallel and assembled later, and a re-run must give byte-identical output. The npm writers do
 * not fit that: `nach2` builds a whole file from objects through async callbacks with moment/lodash and has no
 * per-entry API; `achkit`'s generator writes the creation date and time in the machine's local time zone. The
 * format is small and fixed, and the tests check every file against achkit's independent parser and validator.
 *
 * Layout choices, all deterministic:
 * - Records are separated by '\n' (LF, no CR) with no newline after the last record: NACHA fixes the
 *   94-character records and leaves the line separator to the ODFI; LF is what most accept.
 * - The file is padded with records of 94 '9's up to a multiple of 10 records (blocking factor 10).
 * - File creation date and time are the caller's `fileCreation` (never a clock) as a wall clock in New York, the
 *   time zone of the ACH operators' schedules: a file written at 9 pm Eastern is not dated tomorrow.
 *
 * Error messages never contain an account number: it is only ever placed in the file.
 */

export { MAX_ENTRY_CENTS, MAX_TRACE_SEQUENCE };
export const RECORD_LENGTH = 94;
export const BLOCKING_FACTOR = 10;

/** One batch control's entry/addenda count is 6 digits, so a single-batch file holds at most 999,999 entries. */
export const MAX_ENTRIES = 999_999;

const CHECKING_CREDIT = '22';
const SAVINGS_CREDIT = '32';
const CHECKING_DEBIT = '27';
const SAVINGS_DEBIT = '37';
const CREDITS_ONLY = '220';
const DEBITS_ONLY = '225';
const MIXED = '200';
const FILLER = '9'.repeat(RECORD_LENGTH);

/** An entry as entryRecord writes it: transaction code (a credit or a debit), RDFI, amount, ACH text, trace. */
const ENTRY_RECORD = new RegExp(
  `^6(22|32|27|37)(\\d{8})\\d[0-9 ]{17}(\\d{10})[${ACH_CHARACTERS}]{39}0(\\d{8})(\\d{7})$`,
);

export class NachaFormatError extends Error {
  constructor(message: string) {
    super(`NACHA: ${message}`);
    this.name = 'NachaFormatError';
  }
}

export interface NachaEntryInput {
  /** 9 digits with a valid ABA check digit (validated upstream, checked again here: a wrong one pays another bank). */
  routingNumber: string;
  /** 4–17 digits: the full, decrypted number. Only ever placed in the file, never in an error or log. */
  accountNumber: string;
  accountType: 'checking' | 'savings';
  /**
   * Integer cents, at least 1 and at most 9,999,999,999. An employee with 0 net pay gets no entry: the caller
   * skips them (this writer makes no zero-dollar prenotes) and may leave a gap in the trace sequence.
   */
  amountCents: number;
  /** Up to 15 ACH characters (the tail of the employee id); longer is refused, not cut. */
  individualId: string;
  /** Transliterated to ACH text and cut to 22 characters; the individual id stands in when nothing is left. */
  individualName: string;
  /** The entry's 7-digit trace sequence, unique across the originator's files; entries are assembled in this order. */
  traceSequence: number;
}

/**
 * The offset debit that balances a batch: drawn on the employer's funding account for the batch's credits. Credits
 * above one entry's $99,999,999.99 are offset by several debits (`offsetEntryCount`), with consecutive traces.
 */
export interface NachaOffsetInput {
  routingNumber: string;
  /** The full, decrypted number. Only ever placed in the file, never in an error or log. */
  accountNumber: string;
  accountType: 'checking' | 'savings';
  /** The first offset's trace sequence: after every credit's. */
  traceSequence: number;
}

export interface NachaFileInput {
  originator: Originator;
  /** The payroll's processing time, passed by the caller so that a re-run writes the same bytes. */
  fileCreation: Date;
  /** One of A–Z or 0–9; 'A' by default. Distinguishes files sent the same day to the same destination. */
  fileIdModifier?: string;
  /** YYYY-MM-DD, the pay date; written YYMMDD. */
  effectiveEntryDate: string;
  /** Shown on the employee's statement, e.g. 'PAYROLL' (10 characters). */
  companyEntryDescription: string;
  /** 6 characters shown on the statement; a YYYY-MM-DD date is written YYMMDD. Blank when absent. */
  companyDescriptiveDate?: string;
  /** 1 by default. */
  batchNumber?: number;
  /** Entry detail records from `entryDetailRecord`, in ascending trace order (chunks concatenated in order). */
  entries: readonly string[];
  /**
   * When given, the batch is mixed (200) and ends with the entries that balance it: a debit for its total credits
   * (a payroll), or a credit for its total debits (a reversal), so that debits equal credits.
   */
  offset?: NachaOffsetInput;
  /** `PPD` (the default: consumers' accounts) or `CCD` (a company's own account: a re-debit of the employer). */
  secCode?: 'PPD' | 'CCD';
}

export interface NachaControlTotals {
  batchCount: number;
  blockCount: number;
  entryAddendaCount: number;
  /** 10 digits: the sum of the 8-digit RDFI routing numbers, rightmost 10 digits kept. */
  entryHash: string;
  totalDebitCents: number;
  totalCreditCents: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Field primitives. NACHA: alphanumeric fields are left-justified and space-filled, numeric fields right-justified
// and zero-filled; every field has a fixed width.

function tooManyEntries(count: number): NachaFormatError {
  return new NachaFormatError(`a single-batch file holds at most ${MAX_ENTRIES} entries, got ${count}`);
}

function numeric(value: number, width: number, what: string): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new NachaFormatError(`${what} must be a non-negative integer`);
  const text = String(value);
  if (text.length > width) throw new NachaFormatError(`${what} ${text} does not fit in ${width} digits`);
  return text.padStart(width, '0');
}

function digitsOf(value: string, width: number, what: string): string {
  // Called per entry (trace numbers, routing numbers): a character test rather than a RegExp compiled per call.
  if (value.length !== width || !isDigits(value)) throw new NachaFormatError(`${what} must be exactly ${width} digits`);
  return value;
}

function isDigits(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function yymmdd(isoDate: string, what: string): string {
  if (!isCalendarDate(isoDate))
    throw new NachaFormatError(`${what} must be a calendar date YYYY-MM-DD, got '${isoDate}'`);
  return isoDate.slice(2, 4) + isoDate.slice(5, 7) + isoDate.slice(8, 10);
}

function record(fields: readonly string[]): string {
  const line = fields.join('');
  // A wrong width would shift every later field: fail here rather than write a file the ODFI rejects.
  if (line.length !== RECORD_LENGTH) throw new Error(`NACHA writer bug: record of ${line.length} characters`);
  return line;
}

// ---------------------------------------------------------------------------------------------------------------
// Entry detail ('6') records, built per chunk.

/** 15 digits: the ODFI's 8-digit routing prefix, then the entry's sequence zero-padded to 7 digits. */
export function traceNumber(odfi8: string, sequence: number): string {
  digitsOf(odfi8, 8, 'ODFI identification');
  if (!Number.isSafeInteger(sequence) || sequence < 1 || sequence > MAX_TRACE_SEQUENCE) {
    throw new NachaFormatError(`trace sequence must be an integer from 1 to ${MAX_TRACE_SEQUENCE}, got ${sequence}`);
  }
  return odfi8 + String(sequence).padStart(7, '0');
}

/**
 * One 94-character PPD entry detail record. Pure, so each chunk of a payroll builds its own records in parallel;
 * the trace sequence (the entry's position in the whole payroll) keeps them unique once assembled.
 */
export function entryDetailRecord(odfi8: string, e: NachaEntryInput): string {
  return entryRecord(odfi8, e, 'credit');
}

function entryRecord(odfi8: string, e: NachaEntryInput, direction: 'credit' | 'debit'): string {
  const where = `entry with trace sequence ${e.traceSequence}`;
  const trace = traceNumber(odfi8, e.traceSequence);
  if (!isValidRoutingNumber(e.routingNumber)) {
    throw new NachaFormatError(`${where}: routing number must be 9 digits with a valid ABA check digit`);
  }
  // NACHA allows alphanumeric account numbers, but ours are stored as digits: anything else is corrupt input.
  if (!/^\d{4,17}$/.test(e.accountNumber)) throw new NachaFormatError(`${where}: account number must be 4–17 digits`);
  if (!Number.isSafeInteger(e.amountCents) || e.amountCents < 1 || e.amountCents > MAX_ENTRY_CENTS) {
    throw new NachaFormatError(`${where}: amount must be an integer number of cents from 1 to ${MAX_ENTRY_CENTS}`);
  }
  const codes =
    direction === 'credit'
      ? { checking: CHECKING_CREDIT, savings: SAVINGS_CREDIT }
      : { checking: CHECKING_DEBIT, savings: SAVINGS_DEBIT };
  if (e.accountType !== 'checking' && e.accountType !== 'savings') {
    throw new NachaFormatError(`${where}: account type must be checking or savings`);
  }
  const id = achText(e.individualId);
  // Cutting an id would make it ambiguous on the bank's return; the caller passes a tail that fits.
  if (id.length > 15) throw new NachaFormatError(`${where}: individual id must be at most 15 characters`);
  // PPD makes the receiver's name mandatory: the id stands in for a name with no ACH letter left in it.
  const name = achField(e.individualName, 22, e.individualId);
  if (name.trim() === '') throw new NachaFormatError(`${where}: individual name and id are both blank as ACH text`);
  return record([
    '6',
    codes[e.accountType],
    e.routingNumber.slice(0, 8), // receiving DFI identification
    e.routingNumber.slice(8), // check digit
    e.accountNumber.padEnd(17, ' '), // DFI account number, left-justified
    numeric(e.amountCents, 10, 'amount'),
    id.padEnd(15, ' '),
    name,
    '  ', // discretionary data
    '0', // addenda record indicator: PPD payroll entries carry no addenda
    trace,
  ]);
}

/**
 * An entry written again with a new trace number, as NACHA's reversals and re-initiated entries are: the same
 * receiving bank, account, amount, identification and name as the original. `reverse`: a credit becomes the debit
 * that takes it back (22 → 27, 32 → 37); otherwise the transaction code is kept (a re-debit repeats a debit).
 */
export function reissuedEntry(original: string, odfi8: string, traceSequence: number, reverse: boolean): string {
  const m = ENTRY_RECORD.exec(original);
  if (!m) throw new NachaFormatError('the original is not a 94-character entry record');
  const code = m[1]!;
  let next = code;
  if (reverse) {
    if (code !== CHECKING_CREDIT && code !== SAVINGS_CREDIT) throw new NachaFormatError('only a credit is reversed');
    next = code === CHECKING_CREDIT ? CHECKING_DEBIT : SAVINGS_DEBIT;
  }
  return record(['6', next, original.slice(3, 79), traceNumber(odfi8, traceSequence)]);
}

/** The entry detail records of a file this writer wrote, by trace number. */
export function entryRecordsOf(content: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of content.split(/\r?\n/)) if (line.startsWith('6')) out.set(line.slice(79, 94), line);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// File assembly.

interface EntryTotals {
  count: number;
  hash: number;
  creditCents: number;
  debitCents: number;
}

/**
 * Control totals derived from the entry records themselves, so they can never disagree with the bytes written.
 * Also checks that the records are well-formed entries from this ODFI in strictly ascending trace order, which
 * catches a chunk assembled twice or out of order.
 */
function totalsOf(entries: readonly string[], odfi8: string): EntryTotals {
  let hash = 0;
  let creditCents = 0;
  let debitCents = 0;
  let previousSequence = 0;
  entries.forEach((entry, index) => {
    const where = `entry record ${index + 1}`;
    const m = ENTRY_RECORD.exec(entry);
    if (!m) throw new NachaFormatError(`${where} is not a 94-character entry from entryDetailRecord`);
    const [, code = '', rdfi8 = '', amount = '', traceOdfi = '', sequence = ''] = m;
    if (traceOdfi !== odfi8)
      throw new NachaFormatError(`${where}: trace number does not start with the originator's ODFI`);
    const seq = Number(sequence);
    if (seq <= previousSequence)
      throw new NachaFormatError(`${where}: trace sequence ${seq} is not after ${previousSequence}`);
    previousSequence = seq;
    // Bounded well inside safe integers: 999,999 entries × 99,999,999 < 1e14 for the hash; each total is checked
    // against 12 digits after each entry, and each amount is at most 10 digits.
    hash += Number(rdfi8);
    if (code === CHECKING_DEBIT || code === SAVINGS_DEBIT) debitCents += Number(amount);
    else creditCents += Number(amount);
    if (creditCents > MAX_TOTAL_CENTS || debitCents > MAX_TOTAL_CENTS) {
      throw new NachaFormatError(`a total exceeds the 12-digit control field (${MAX_TOTAL_CENTS} cents)`);
    }
  });
  return { count: entries.length, hash, creditCents, debitCents };
}

/** NACHA: the entry hash keeps the rightmost 10 digits of the sum of the 8-digit RDFI routing numbers. */
function entryHashField(sum: number): string {
  return String(sum % 10_000_000_000).padStart(10, '0');
}

function immediateDestination(value: string): string {
  // NACHA: a blank, then the 9-digit routing number of the receiving point (the ODFI's bank or its operator).
  return ` ${digitsOf(value.trim(), 9, 'immediate destination')}`;
}

function immediateOrigin(value: string): string {
  // NACHA: 10 characters, usually a blank and a 9-digit routing number, or a 10-character company identifier.
  const v = value.trim();
  if (/^[0-9A-Z]{9}$/.test(v)) return ` ${v}`;
  if (/^[0-9A-Z]{10}$/.test(v)) return v;
  throw new NachaFormatError('immediate origin must be 10 uppercase letters/digits, or a blank and 9');
}

function required(value: string, width: number, what: string): string {
  const field = achField(value, width);
  if (field.trim() === '') throw new NachaFormatError(`${what} is blank after sanitising`);
  return field;
}

export function buildNachaFile(input: NachaFileInput): { content: string; control: NachaControlTotals } {
  const o = input.originator;
  const odfi8 = digitsOf(o.originating_dfi_identification, 8, 'originating DFI identification');
  const batchNumber = input.batchNumber ?? 1;
  if (!Number.isSafeInteger(batchNumber) || batchNumber < 1 || batchNumber > 9_999_999) {
    throw new NachaFormatError('batch number must be an integer from 1 to 9999999');
  }
  const fileIdModifier = input.fileIdModifier ?? 'A';
  if (!/^[A-Z0-9]$/.test(fileIdModifier)) throw new NachaFormatError('file id modifier must be one of A–Z or 0–9');
  const created = input.fileCreation;
  if (!(created instanceof Date) || Number.isNaN(created.getTime())) {
    throw new NachaFormatError('file creation time is not a valid date');
  }
  // An empty batch is invalid NACHA and a payroll with nothing to pay has no file: the caller never asks for one.
  if (input.entries.length === 0) throw new NachaFormatError('a file needs at least one entry');
  // Before reading the entries; checked again once the offset debits are counted.
  if (input.entries.length > MAX_ENTRIES) throw tooManyEntries(input.entries.length);

  const companyName = required(o.company_name, 16, 'company name');
  const companyId = required(o.company_identification, 10, 'company identification');
  const wallClock = dateInTimeZone(created, BANK_TIME_ZONE);
  const creationDate = yymmdd(wallClock.date, 'file creation date');
  const descriptiveDate =
    input.companyDescriptiveDate === undefined
      ? '      '
      : /^\d{4}-\d{2}-\d{2}$/.test(input.companyDescriptiveDate)
        ? yymmdd(input.companyDescriptiveDate, 'company descriptive date')
        : achField(input.companyDescriptiveDate, 6);
  const batch = numeric(batchNumber, 7, 'batch number');

  const totals = totalsOf(input.entries, odfi8);
  const entries = [...input.entries];
  if (input.offset) {
    const last = input.entries.at(-1)!;
    if (input.offset.traceSequence <= Number(last.slice(87))) {
      throw new NachaFormatError("the offset entry's trace sequence must follow every credit's");
    }
    // Credits are balanced by debits from the funding account (a payroll), debits by credits to it (a reversal).
    const direction = totals.creditCents >= totals.debitCents ? 'debit' : 'credit';
    const imbalance = Math.abs(totals.creditCents - totals.debitCents);
    const count = offsetEntryCount(imbalance);
    for (let i = 0; i < count; i++) {
      const amountCents = Math.min(MAX_ENTRY_CENTS, imbalance - i * MAX_ENTRY_CENTS);
      // The offset names the originator: it is the employer's own account the batch is drawn on or paid back to.
      entries.push(
        entryRecord(
          odfi8,
          {
            ...input.offset,
            traceSequence: input.offset.traceSequence + i,
            amountCents,
            individualId: o.company_identification.trim(),
            individualName: o.company_name,
          },
          direction,
        ),
      );
      totals.hash += Number(input.offset.routingNumber.slice(0, 8));
    }
    if (direction === 'debit') totals.debitCents += imbalance;
    else totals.creditCents += imbalance;
    totals.count += count;
    if (totals.count > MAX_ENTRIES) throw tooManyEntries(totals.count);
  }
  const serviceClass =
    totals.debitCents > 0 && totals.creditCents > 0 ? MIXED : totals.debitCents > 0 ? DEBITS_ONLY : CREDITS_ONLY;
  const debitCents = totals.debitCents;
  const hash = entryHashField(totals.hash);
  const debit = numeric(debitCents, 12, 'total debit');
  const credit = numeric(totals.creditCents, 12, 'total credit');

  const fileHeader = record([
    '1',
    '01', // priority code
    immediateDestination(o.immediate_destination),
    immediateOrigin(o.immediate_origin),
    creationDate,
    wallClock.time,
    fileIdModifier,
    '094', // record size
    '10', // blocking factor
    '1', // format code
    achField(o.immediate_destination_name, 23),
    achField(o.immediate_origin_name, 23),
    ' '.repeat(8), // reference code
  ]);
  const batchHeader = record([
    '5',
    serviceClass,
    companyName,
    ' '.repeat(20), // company discretionary data
    companyId,
    input.secCode ?? 'PPD',
    required(input.companyEntryDescription, 10, 'company entry description'),
    descriptiveDate,
    yymmdd(input.effectiveEntryDate, 'effective entry date'),
    '   ', // settlement date: filled in by the ACH operator
    '1', // originator status code: a depository financial institution bound by the NACHA rules
    odfi8,
    batch,
  ]);
  const batchControl = record([
    '8',
    serviceClass,
    numeric(totals.count, 6, 'batch entry/addenda count'),
    hash,
    debit,
    credit,
    companyId,
    ' '.repeat(19), // message authentication code
    ' '.repeat(6), // reserved
    odfi8,
    batch,
  ]);

  const recordCount = totals.count + 4; // file header, batch header, batch control, file control
  const blockCount = Math.ceil(recordCount / BLOCKING_FACTOR);
  const fileControl = record([
    '9',
    numeric(1, 6, 'batch count'),
    numeric(blockCount, 6, 'block count'),
    numeric(totals.count, 8, 'file entry/addenda count'),
    hash,
    debit,
    credit,
    ' '.repeat(39), // reserved
  ]);

  const lines: string[] = [fileHeader, batchHeader, ...entries, batchControl, fileControl];
  while (lines.length < blockCount * BLOCKING_FACTOR) lines.push(FILLER);
  return {
    content: lines.join('\n'),
    control: {
      batchCount: 1,
      blockCount,
      entryAddendaCount: totals.count,
      entryHash: hash,
      totalDebitCents: debitCents,
      totalCreditCents: totals.creditCents,
    },
  };
}

/**
 * Reads the File Control ('9') record of a stored file back into totals, e.g. to reconcile a file fetched from
 * storage with the payroll it was written for. Accepts LF or CRLF separators.
 */
export function parseControlTotals(content: string): NachaControlTotals {
  const fileControl = content.split(/\r?\n/).find((line) => line.startsWith('9') && line !== FILLER);
  const m =
    fileControl === undefined ? null : /^9(\d{6})(\d{6})(\d{8})(\d{10})(\d{12})(\d{12}) {39}$/.exec(fileControl);
  if (!m) throw new NachaFormatError('no well-formed file control record');
  const [, batches = '', blocks = '', count = '', entryHash = '', debit = '', credit = ''] = m;
  return {
    batchCount: Number(batches),
    blockCount: Number(blocks),
    entryAddendaCount: Number(count),
    entryHash,
    totalDebitCents: Number(debit),
    totalCreditCents: Number(credit),
  };
}
