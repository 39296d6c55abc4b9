/*
 * The tests' own writer of NACHA return and notification-of-change (NOC) files, built the way a receiving bank
 * (the RDFI) builds the file it sends back to an originator's bank (the ODFI). Deliberately independent of the
 * service's NACHA code: it imports nothing from shared/ or functions/, so a shared mistake cannot hide in both.
 *
 * Layouts (1-based positions) follow the NACHA Operating Rules' record formats: file header '1', company/batch
 * header '5', entry detail '6', return addenda '7'/'99', NOC addenda '7'/'98', batch control '8', file control '9'.
 *
 * What a returning bank does, and so what this writer does:
 * - The file goes back to the ODFI: immediate destination is the ODFI's routing number, immediate origin the RDFI's.
 * - A return or NOC is a new entry originated by the RDFI: the batch header's ODFI identification and the trace
 *   numbers are the RDFI's, and the entry's receiving DFI is the original ODFI (its routing number, check digit
 *   included). The company name and identification are copied from the original batch.
 * - A returned credit to a checking account (22) is sent as 21 and a savings credit (32) as 31: the "return or
 *   NOC" credit codes. The returned amount goes back to the ODFI as a credit, so the batch is service class 220 and
 *   the amounts add up in the control records' total credit. A NOC (SEC 'COR') uses the same codes for zero.
 * - The entry hash adds the 8-digit receiving DFI identifications of the entries, i.e. the ODFI's, and keeps the
 *   rightmost 10 digits.
 *
 * The writer refuses input it could not write faithfully (wrong lengths, non-digits, characters outside printable
 * ASCII) rather than truncating it; for files with one deliberate fault, write a good file and use corruptLine.
 */

export interface BankReturn {
  /** 15 digits: the trace number of the entry the originator sent. */
  originalTrace: string;
  /** 'R01'..'R99'. */
  code: string;
  /** The returned amount (the original credit's amount), in cents. */
  amountCents: number;
  /** 9-digit routing number of the receiver's bank (the RDFI of the original entry). */
  routing: string;
  /** The receiver's account number as sent (≤ 17 characters). */
  account: string;
  /** The original entry's account type; checking (22, returned as 21) unless savings (32, returned as 31). */
  accountType?: 'checking' | 'savings';
  /**
   * The original entry was a debit (27/37: an employer's funding debit, a reversal): it comes back as 26/36, a
   * debit in the return file. Default: a credit (a deposit).
   */
  originalDebit?: boolean;
  /** ≤ 15 characters, copied from the original entry. */
  individualId?: string;
  /** ≤ 22 characters, copied from the original entry. */
  individualName?: string;
  /** YYMMDD, for R14/R15; blanks when absent. */
  dateOfDeath?: string;
  /** ≤ 44 characters. */
  addendaInformation?: string;
}

export interface BankCorrection {
  /** 15 digits: the trace number of the entry the originator sent. */
  originalTrace: string;
  /** 'C01', 'C02', 'C03', 'C05', 'C06', 'C07' are laid out; any other 'Cnn' gets a blank corrected-data field. */
  code: 'C01' | 'C02' | 'C03' | 'C05' | 'C06' | 'C07' | string;
  /** 9-digit routing number the original entry was sent to. */
  routing: string;
  /** The account number as sent (≤ 17 characters). */
  account: string;
  /** The original entry's account type (the NOC entry is 21 for checking, 31 for savings). */
  accountType?: 'checking' | 'savings';
  individualId?: string;
  individualName?: string;
  /** The correct values; the ones the change code needs must be present. */
  corrected: { routing?: string; account?: string; accountType?: 'checking' | 'savings' };
}

export interface ReturnFileOptions {
  /** The originator's ODFI routing number (9 digits): the file goes back to it. */
  odfiRouting: string;
  /** The bank sending the returns (the RDFI), 9 digits. */
  rdfiRouting: string;
  /** ≤ 16 characters, copied from the original batch. */
  companyName: string;
  /** 10 characters, the originator's company id from the original batch. */
  companyIdentification: string;
  /** File creation date and time (UTC), also the batches' effective entry date. Default: now. */
  createdAt?: Date;
  /** One upper-case letter or digit. Default 'A'. */
  fileIdModifier?: string;
}

export const RECORD_LENGTH = 94;
export const BLOCKING_FACTOR = 10;

const RETURN_CODE = /^R\d{2}$/;
const CHANGE_CODE = /^C\d{2}$/;
const PRINTABLE_ASCII = /^[\x20-\x7E]*$/;

// ---------------------------------------------------------------------------------------------------------------
// Field helpers: each returns exactly `width` characters or throws.

function alpha(value: string, width: number, what: string): string {
  if (!PRINTABLE_ASCII.test(value)) throw new Error(`${what}: not printable ASCII: ${JSON.stringify(value)}`);
  if (value.length > width) throw new Error(`${what}: ${JSON.stringify(value)} is longer than ${width} characters`);
  return value.padEnd(width, ' ');
}

function numeric(value: number | bigint, width: number, what: string): string {
  if (typeof value === 'number' && (!Number.isSafeInteger(value) || value < 0)) {
    throw new Error(`${what}: ${value} is not a non-negative integer`);
  }
  if (value < 0) throw new Error(`${what}: ${value} is negative`);
  const text = value.toString();
  if (text.length > width) throw new Error(`${what}: ${text} does not fit in ${width} digits`);
  return text.padStart(width, '0');
}

function digitsOf(value: string, length: number, what: string): string {
  if (!new RegExp(`^\\d{${length}}$`).test(value))
    throw new Error(`${what}: ${JSON.stringify(value)} is not ${length} digits`);
  return value;
}

function yymmdd(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return two(date.getUTCFullYear() % 100) + two(date.getUTCMonth() + 1) + two(date.getUTCDate());
}

function hhmm(date: Date): string {
  return String(date.getUTCHours()).padStart(2, '0') + String(date.getUTCMinutes()).padStart(2, '0');
}

function record(fields: string[]): string {
  const line = fields.join('');
  if (line.length !== RECORD_LENGTH) throw new Error(`record is ${line.length} characters, not ${RECORD_LENGTH}`);
  return line;
}

/** The "return or NOC" credit code for an original credit to this kind of account. */
function returnTransactionCode(accountType: 'checking' | 'savings' | undefined): '21' | '31' {
  return accountType === 'savings' ? '31' : '21';
}

/** The forward credit code for this kind of account (what C05/C06/C07 corrected data carries). */
function creditTransactionCode(accountType: 'checking' | 'savings'): '22' | '32' {
  return accountType === 'savings' ? '32' : '22';
}

// ---------------------------------------------------------------------------------------------------------------
// NOC corrected data (addenda 98 positions 36-64, 29 characters).

function need<T>(value: T | undefined, code: string, what: string): T {
  if (value === undefined) throw new Error(`${code}: corrected.${what} is required`);
  return value;
}

function correctedRouting(c: BankCorrection): string {
  return digitsOf(need(c.corrected.routing, c.code, 'routing'), 9, `${c.code} corrected routing`);
}

function correctedAccount(c: BankCorrection): string {
  return alpha(need(c.corrected.account, c.code, 'account'), 17, `${c.code} corrected account`);
}

function correctedCode(c: BankCorrection): string {
  return creditTransactionCode(need(c.corrected.accountType, c.code, 'accountType'));
}

/**
 * C01 account (1-17); C02 routing (1-9); C03 routing (1-9), 3 blanks, account (13-29); C05 transaction code (1-2);
 * C06 account (1-17), 3 blanks, transaction code (21-22); C07 routing (1-9), account (10-26), transaction code
 * (27-28). Other change codes: 29 blanks.
 */
export function correctedData(c: BankCorrection): string {
  let data: string;
  switch (c.code) {
    case 'C01':
      data = correctedAccount(c);
      break;
    case 'C02':
      data = correctedRouting(c);
      break;
    case 'C03':
      data = `${correctedRouting(c)}   ${correctedAccount(c)}`;
      break;
    case 'C05':
      data = correctedCode(c);
      break;
    case 'C06':
      data = `${correctedAccount(c)}   ${correctedCode(c)}`;
      break;
    case 'C07':
      data = correctedRouting(c) + correctedAccount(c) + correctedCode(c);
      break;
    default:
      data = '';
  }
  return alpha(data.trimEnd(), 29, `${c.code} corrected data`);
}

// ---------------------------------------------------------------------------------------------------------------
// The file.

interface BatchEntry {
  entry: string;
  addenda: string;
  credit: bigint;
  debit: bigint;
}

interface Context {
  odfiRouting: string;
  rdfi8: string;
  companyName: string;
  companyIdentification: string;
  effectiveDate: string;
  nextTrace: () => string;
}

function traceSequencer(rdfi8: string): () => string {
  let sequence = 0;
  return () => {
    sequence += 1;
    return rdfi8 + numeric(sequence, 7, 'trace sequence');
  };
}

function entryDetail(
  ctx: Context,
  code: '21' | '31' | '26' | '36',
  account: string,
  amountCents: number,
  individualId: string | undefined,
  individualName: string | undefined,
  trace: string,
): string {
  return record([
    '6',
    code,
    ctx.odfiRouting, // receiving DFI identification (8) + check digit (1): the return goes back to the ODFI
    alpha(account, 17, 'account'),
    numeric(amountCents, 10, 'amount'),
    alpha(individualId ?? '', 15, 'individual id'),
    alpha(individualName ?? '', 22, 'individual name'),
    '  ', // discretionary data
    '1', // addenda record indicator
    trace,
  ]);
}

function returnEntry(ctx: Context, r: BankReturn): BatchEntry {
  if (!RETURN_CODE.test(r.code)) throw new Error(`return code ${JSON.stringify(r.code)} is not Rnn`);
  const originalRdfi8 = digitsOf(r.routing, 9, 'return routing').slice(0, 8);
  const dateOfDeath = r.dateOfDeath === undefined ? '      ' : digitsOf(r.dateOfDeath, 6, 'date of death');
  const trace = ctx.nextTrace();
  // A returned debit is a "return or NOC" debit: 26 for checking, 36 for savings.
  const code = r.originalDebit ? (r.accountType === 'savings' ? '36' : '26') : returnTransactionCode(r.accountType);
  const entry = entryDetail(ctx, code, r.account, r.amountCents, r.individualId, r.individualName, trace);
  const addenda = record([
    '7',
    '99',
    r.code,
    digitsOf(r.originalTrace, 15, 'original trace'),
    dateOfDeath,
    originalRdfi8,
    alpha(r.addendaInformation ?? '', 44, 'addenda information'),
    trace,
  ]);
  return r.originalDebit
    ? { entry, addenda, credit: 0n, debit: BigInt(r.amountCents) }
    : { entry, addenda, credit: BigInt(r.amountCents), debit: 0n };
}

function correctionEntry(ctx: Context, c: BankCorrection): BatchEntry {
  if (!CHANGE_CODE.test(c.code)) throw new Error(`change code ${JSON.stringify(c.code)} is not Cnn`);
  const originalRdfi8 = digitsOf(c.routing, 9, 'correction routing').slice(0, 8);
  const trace = ctx.nextTrace();
  const entry = entryDetail(
    ctx,
    returnTransactionCode(c.accountType),
    c.account,
    0,
    c.individualId,
    c.individualName,
    trace,
  );
  const addenda = record([
    '7',
    '98',
    c.code,
    digitsOf(c.originalTrace, 15, 'original trace'),
    ' '.repeat(6), // reserved
    originalRdfi8,
    correctedData(c),
    ' '.repeat(15), // reserved
    trace,
  ]);
  return { entry, addenda, credit: 0n, debit: 0n };
}

interface BatchTotals {
  records: string[];
  entryAddendaCount: number;
  entryHash: bigint;
  credit: bigint;
  debit: bigint;
}

function batch(
  ctx: Context,
  sec: 'PPD' | 'COR',
  description: string,
  batchNumber: number,
  entries: BatchEntry[],
): BatchTotals {
  const odfi8 = ctx.odfiRouting.slice(0, 8);
  const entryHash = BigInt(odfi8) * BigInt(entries.length);
  const credit = entries.reduce((sum, e) => sum + e.credit, 0n);
  const debit = entries.reduce((sum, e) => sum + e.debit, 0n);
  // 21/31 are credit-side codes, 26/36 debit-side: credits only (220), debits only (225) or mixed (200).
  const hasDebits = entries.some((e) => e.entry.slice(1, 3).endsWith('6'));
  const hasCredits = entries.some((e) => e.entry.slice(1, 3).endsWith('1'));
  const serviceClass = hasDebits && hasCredits ? '200' : hasDebits ? '225' : '220';
  const entryAddendaCount = entries.length * 2;
  const header = record([
    '5',
    serviceClass,
    alpha(ctx.companyName, 16, 'company name'),
    ' '.repeat(20), // company discretionary data
    alpha(ctx.companyIdentification, 10, 'company identification'),
    sec,
    alpha(description, 10, 'company entry description'),
    ' '.repeat(6), // company descriptive date
    ctx.effectiveDate,
    '   ', // settlement date: the ACH operator fills it in
    '1', // originator status code
    ctx.rdfi8, // the returning bank originates these entries
    numeric(batchNumber, 7, 'batch number'),
  ]);
  const control = record([
    '8',
    serviceClass,
    numeric(entryAddendaCount, 6, 'batch entry/addenda count'),
    numeric(entryHash % 10_000_000_000n, 10, 'batch entry hash'),
    numeric(debit, 12, 'batch total debit'),
    numeric(credit, 12, 'batch total credit'),
    alpha(ctx.companyIdentification, 10, 'company identification'),
    ' '.repeat(19), // message authentication code
    ' '.repeat(6), // reserved
    ctx.rdfi8,
    numeric(batchNumber, 7, 'batch number'),
  ]);
  const records = [header, ...entries.flatMap((e) => [e.entry, e.addenda]), control];
  return { records, entryAddendaCount, entryHash, credit, debit };
}

/**
 * A return/NOC file from the RDFI `opts.rdfiRouting` to the ODFI `opts.odfiRouting`: one PPD batch of returns
 * (addenda 99) when there are returns, then one COR batch of NOCs (addenda 98) when there are corrections. Records
 * are joined with '\n' (no trailing newline) and the file is filled with '9' records to a multiple of 10.
 */
export function bankReturnFile(
  opts: ReturnFileOptions,
  items: { returns?: BankReturn[]; corrections?: BankCorrection[] },
): string {
  const odfiRouting = digitsOf(opts.odfiRouting, 9, 'odfiRouting');
  const rdfiRouting = digitsOf(opts.rdfiRouting, 9, 'rdfiRouting');
  const createdAt = opts.createdAt ?? new Date();
  if (Number.isNaN(createdAt.getTime())) throw new Error('createdAt is not a valid date');
  const fileIdModifier = opts.fileIdModifier ?? 'A';
  if (!/^[A-Z0-9]$/.test(fileIdModifier)) throw new Error(`file id modifier ${JSON.stringify(fileIdModifier)}`);
  if (opts.companyIdentification.length !== 10) {
    throw new Error(`company identification ${JSON.stringify(opts.companyIdentification)} is not 10 characters`);
  }
  const rdfi8 = rdfiRouting.slice(0, 8);
  const ctx: Context = {
    odfiRouting,
    rdfi8,
    companyName: opts.companyName,
    companyIdentification: opts.companyIdentification,
    effectiveDate: yymmdd(createdAt),
    nextTrace: traceSequencer(rdfi8),
  };

  const batches: BatchTotals[] = [];
  const returns = items.returns ?? [];
  const corrections = items.corrections ?? [];
  if (returns.length > 0) {
    const entries = returns.map((r) => returnEntry(ctx, r));
    batches.push(batch(ctx, 'PPD', 'RETURN', batches.length + 1, entries));
  }
  if (corrections.length > 0) {
    const entries = corrections.map((c) => correctionEntry(ctx, c));
    batches.push(batch(ctx, 'COR', 'NOC', batches.length + 1, entries));
  }

  const fileHeader = record([
    '1',
    '01', // priority code
    ` ${odfiRouting}`, // immediate destination
    ` ${rdfiRouting}`, // immediate origin
    yymmdd(createdAt),
    hhmm(createdAt),
    fileIdModifier,
    '094', // record size
    '10', // blocking factor
    '1', // format code
    ' '.repeat(23), // immediate destination name (optional)
    ' '.repeat(23), // immediate origin name (optional)
    ' '.repeat(8), // reference code (optional)
  ]);

  const recordCount = 1 + batches.reduce((n, b) => n + b.records.length, 0) + 1;
  const blockCount = Math.ceil(recordCount / BLOCKING_FACTOR);
  const fileHash = batches.reduce((sum, b) => sum + b.entryHash, 0n);
  const fileControl = record([
    '9',
    numeric(batches.length, 6, 'batch count'),
    numeric(blockCount, 6, 'block count'),
    numeric(
      batches.reduce((n, b) => n + b.entryAddendaCount, 0),
      8,
      'file entry/addenda count',
    ),
    numeric(fileHash % 10_000_000_000n, 10, 'file entry hash'),
    numeric(
      batches.reduce((sum, b) => sum + b.debit, 0n),
      12,
      'file total debit',
    ),
    numeric(
      batches.reduce((sum, b) => sum + b.credit, 0n),
      12,
      'file total credit',
    ),
    ' '.repeat(39), // reserved
  ]);

  const lines = [fileHeader, ...batches.flatMap((b) => b.records), fileControl];
  while (lines.length % BLOCKING_FACTOR !== 0) lines.push('9'.repeat(RECORD_LENGTH));
  return lines.join('\n');
}

/** The file with its `lineNumber`-th line (1-based) replaced by `mutate(line)`; for "one bad line" tests. */
export function corruptLine(file: string, lineNumber: number, mutate: (line: string) => string): string {
  const lines = file.split('\n');
  if (!Number.isInteger(lineNumber) || lineNumber < 1 || lineNumber > lines.length) {
    throw new Error(`line ${lineNumber} is not in a file of ${lines.length} lines`);
  }
  lines[lineNumber - 1] = mutate(lines[lineNumber - 1]!);
  return lines.join('\n');
}
