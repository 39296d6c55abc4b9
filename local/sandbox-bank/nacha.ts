/*
 * The sandbox bank's own NACHA code: a reader for the files an originator delivers and a writer for the return files
 * a receiving bank sends back. Independent of the service's shared/adapters/nacha*.ts on purpose: the bank checks
 * the service's files, it must not share their mistakes.
 *
 * Positions below are 1-based and inclusive, as the NACHA Operating Rules print them.
 */

export const RECORD_LENGTH = 94;
const BLOCKING_FACTOR = 10;
const FILLER = '9'.repeat(RECORD_LENGTH);

/** The sandbox's magic account: every entry to it comes back returned. */
export const MAGIC_ACCOUNT = '000000000';
export const MAGIC_RETURN_CODE = 'R03';

export interface ReadEntry {
  line: number;
  transactionCode: string;
  debit: boolean;
  /** 9 digits: receiving DFI identification and check digit (positions 4-12). */
  routing: string;
  /** Positions 13-29 as written (17 characters). */
  account: string;
  amountCents: number;
  /** Positions 40-54 as written. */
  individualId: string;
  /** Positions 55-76 as written. */
  individualName: string;
  trace: string;
}

export interface ReadBatch {
  line: number;
  serviceClass: string;
  /** Positions 5-20 as written. */
  companyName: string;
  /** Positions 41-50 as written. */
  companyIdentification: string;
  sec: string;
  odfi8: string;
  entries: ReadEntry[];
}

export type NachaReading =
  | {
      ok: true;
      batches: ReadBatch[];
      entryCount: number;
      totalDebitCents: number;
      totalCreditCents: number;
    }
  | { ok: false; reason: string };

class Refusal extends Error {}

function refuse(line: number, message: string): never {
  throw new Refusal(`line ${line}: ${message}`);
}

function field(raw: string, from: number, to: number): string {
  return raw.slice(from - 1, to);
}

function digits(raw: string, from: number, to: number, line: number, what: string): string {
  const value = field(raw, from, to);
  if (!/^\d+$/.test(value)) refuse(line, `${what} (positions ${from}-${to}) "${value}" is not digits`);
  return value;
}

function filled(raw: string, from: number, to: number, line: number, what: string): string {
  const value = field(raw, from, to);
  if (value.trim() === '') refuse(line, `${what} (positions ${from}-${to}) is blank`);
  return value;
}

/** The ABA check digit of an 8-digit routing prefix (weights 3, 7, 1). */
export function checkDigit(routing8: string): string {
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = weights.reduce((total, w, i) => total + w * Number(routing8[i]), 0);
  return String((10 - (sum % 10)) % 10);
}

function linesOf(text: string): string[] {
  if (!/[\r\n]/.test(text) && text.length > 0 && text.length % RECORD_LENGTH === 0) {
    const out: string[] = [];
    for (let at = 0; at < text.length; at += RECORD_LENGTH) out.push(text.slice(at, at + RECORD_LENGTH));
    return out;
  }
  const lines = text.split(/\r?\n/);
  // One newline after the last record is common and harmless.
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Entry codes: x1-x4 are credits (x1 a return, x3/x4 prenotes or zero), x6-x9 debits; x is 2-5 (account kind). */
function isDebit(code: string, line: number): boolean {
  if (!/^[2-5][1-46-9]$/.test(code)) refuse(line, `transaction code "${code}" is not one the bank knows`);
  return Number(code[1]) >= 6;
}

interface Totals {
  count: number;
  hash: number;
  debit: number;
  credit: number;
}

function compareTotals(raw: string, line: number, what: string, at: Record<keyof Totals, [number, number]>, t: Totals) {
  for (const key of ['count', 'hash', 'debit', 'credit'] as const) {
    const [from, to] = at[key];
    const declared = Number(digits(raw, from, to, line, `${what} ${key}`));
    const actual = key === 'hash' ? t.hash % 10_000_000_000 : t[key];
    if (declared !== actual) refuse(line, `${what} ${key} is ${declared}; the records add up to ${actual}`);
  }
}

/** Reads a delivered file whole; any fault refuses it, with the first fault as the reason. */
export function readNacha(bytes: Buffer): NachaReading {
  try {
    return read(bytes);
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.message };
    throw error;
  }
}

function read(bytes: Buffer): NachaReading {
  if (bytes.length === 0) refuse(1, 'the file is empty');
  const bad = bytes.findIndex((b) => (b < 0x20 || b > 0x7e) && b !== 0x0a && b !== 0x0d);
  if (bad >= 0) refuse(bytes.subarray(0, bad).toString('latin1').split('\n').length, 'a byte is not printable ASCII');
  const lines = linesOf(bytes.toString('latin1'));
  lines.forEach((raw, i) => {
    if (raw.length !== RECORD_LENGTH) refuse(i + 1, `a record is ${RECORD_LENGTH} characters, this one ${raw.length}`);
  });

  let n = 0;
  const next = () => lines[n++];
  const header = next()!;
  if (header[0] !== '1') refuse(1, 'the file must open with a file header (type 1)');
  if (field(header, 35, 37) !== '094' || field(header, 38, 39) !== '10' || field(header, 40, 40) !== '1')
    refuse(1, 'record size, blocking factor or format code is not 094, 10, 1');

  const batches: ReadBatch[] = [];
  const file: Totals = { count: 0, hash: 0, debit: 0, credit: 0 };
  while (lines[n]?.[0] === '5') {
    const line = n + 1;
    const raw = next()!;
    const batch: ReadBatch = {
      line,
      serviceClass: field(raw, 2, 4),
      companyName: filled(raw, 5, 20, line, 'company name'),
      companyIdentification: filled(raw, 41, 50, line, 'company identification'),
      sec: filled(raw, 51, 53, line, 'standard entry class code'),
      odfi8: digits(raw, 80, 87, line, 'originating DFI identification'),
      entries: [],
    };
    if (!['200', '220', '225'].includes(batch.serviceClass))
      refuse(line, `service class "${batch.serviceClass}" is not 200, 220 or 225`);
    const batchNumber = digits(raw, 88, 94, line, 'batch number');
    const totals: Totals = { count: 0, hash: 0, debit: 0, credit: 0 };
    while (lines[n]?.[0] === '6') {
      const at = n + 1;
      const e = next()!;
      const code = digits(e, 2, 3, at, 'transaction code');
      const debit = isDebit(code, at);
      if (debit && batch.serviceClass === '220') refuse(at, 'a debit in a credits-only batch (220)');
      if (!debit && batch.serviceClass === '225') refuse(at, 'a credit in a debits-only batch (225)');
      const routing = digits(e, 4, 12, at, 'receiving DFI identification');
      if (checkDigit(routing.slice(0, 8)) !== routing[8])
        refuse(at, `routing number ${routing} has a wrong check digit`);
      const entry: ReadEntry = {
        line: at,
        transactionCode: code,
        debit,
        routing,
        account: filled(e, 13, 29, at, 'DFI account number'),
        amountCents: Number(digits(e, 30, 39, at, 'amount')),
        individualId: field(e, 40, 54),
        individualName: field(e, 55, 76),
        trace: digits(e, 80, 94, at, 'trace number'),
      };
      const addendaIndicator = field(e, 79, 79);
      if (addendaIndicator !== '0' && addendaIndicator !== '1') refuse(at, 'addenda record indicator is not 0 or 1');
      batch.entries.push(entry);
      totals.count += 1;
      totals.hash += Number(routing.slice(0, 8));
      if (debit) totals.debit += entry.amountCents;
      else totals.credit += entry.amountCents;
      let addenda = 0;
      while (lines[n]?.[0] === '7') {
        if (addendaIndicator !== '1') refuse(n + 1, 'an addenda record follows an entry whose indicator is 0');
        next();
        addenda += 1;
        totals.count += 1;
      }
      if (addendaIndicator === '1' && addenda === 0) refuse(at, 'the entry announces an addenda record it lacks');
    }
    const controlLine = n + 1;
    const control = next();
    if (control?.[0] !== '8') refuse(controlLine, 'a batch must close with a batch control (type 8)');
    if (batch.entries.length === 0) refuse(line, 'a batch holds no entries');
    if (field(control, 2, 4) !== batch.serviceClass) refuse(controlLine, 'service class differs from its header');
    if (field(control, 45, 54) !== batch.companyIdentification)
      refuse(controlLine, 'company identification differs from its header');
    if (field(control, 80, 94) !== batch.odfi8 + batchNumber)
      refuse(controlLine, 'originating DFI or batch number differs from its header');
    compareTotals(
      control,
      controlLine,
      'batch control',
      { count: [5, 10], hash: [11, 20], debit: [21, 32], credit: [33, 44] },
      totals,
    );
    batches.push(batch);
    file.count += totals.count;
    file.hash += totals.hash;
    file.debit += totals.debit;
    file.credit += totals.credit;
  }

  const controlLine = n + 1;
  const control = next();
  if (control?.[0] !== '9' || control === FILLER)
    refuse(controlLine, 'expected a batch header (type 5) or the file control (type 9)');
  if (batches.length === 0) refuse(controlLine, 'the file holds no batch');
  const batchCount = Number(digits(control, 2, 7, controlLine, 'file control batch count'));
  if (batchCount !== batches.length)
    refuse(controlLine, `batch count is ${batchCount}; the file has ${batches.length}`);
  compareTotals(
    control,
    controlLine,
    'file control',
    { count: [14, 21], hash: [22, 31], debit: [32, 43], credit: [44, 55] },
    file,
  );
  for (let i = n; i < lines.length; i++)
    if (lines[i] !== FILLER) refuse(i + 1, 'only filler may follow the file control');
  const blocks = Number(digits(control, 8, 13, controlLine, 'block count'));
  const expectedBlocks = Math.ceil(lines.length / BLOCKING_FACTOR);
  if (blocks !== expectedBlocks) refuse(controlLine, `block count is ${blocks}; the file makes ${expectedBlocks}`);

  return {
    ok: true,
    batches,
    entryCount: batches.reduce((sum, b) => sum + b.entries.length, 0),
    totalDebitCents: file.debit,
    totalCreditCents: file.credit,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The return file, laid out as a receiving bank (RDFI) sends it to the originator's bank (ODFI).

function num(value: number, width: number): string {
  const text = String(value);
  if (!Number.isSafeInteger(value) || value < 0 || text.length > width)
    throw new Error(`sandbox bank: ${value} does not fit ${width} digits`);
  return text.padStart(width, '0');
}

function record(fields: string[]): string {
  const line = fields.join('');
  if (line.length !== RECORD_LENGTH) throw new Error(`sandbox bank: record of ${line.length} characters`);
  return line;
}

function yymmdd(d: Date): string {
  return d.toISOString().slice(2, 10).replaceAll('-', '');
}

function hhmm(d: Date): string {
  return d.toISOString().slice(11, 16).replace(':', '');
}

interface ReturnBatch {
  records: string[];
  count: number;
  hash: number;
  debit: number;
  credit: number;
}

/**
 * The return file for every entry of `reading` to the magic account, or undefined when there is none. Returned
 * credits go back in a 220 batch as 21/31 (x1), returned debits in a 225 batch as 26/36 (x6); one batch per original
 * batch and side, carrying that batch's company name and identification. Traces are the RDFI's.
 */
export function returnFileFor(
  reading: Extract<NachaReading, { ok: true }>,
  createdAt: Date,
  code = MAGIC_RETURN_CODE,
): string | undefined {
  const returned = reading.batches.flatMap((b) => b.entries.filter((e) => e.account.trim() === MAGIC_ACCOUNT));
  const first = returned[0];
  if (first === undefined) return undefined;
  // The returning bank: the RDFI of the first returned entry (the sandbox answers for every receiving bank).
  const rdfiRouting = first.routing;
  const rdfi8 = rdfiRouting.slice(0, 8);
  const firstBatch = reading.batches.find((b) => b.entries.includes(first))!;
  const date = yymmdd(createdAt);
  let sequence = 0;
  const batches: ReturnBatch[] = [];

  for (const original of reading.batches) {
    const odfiRouting = original.odfi8 + checkDigit(original.odfi8);
    for (const debit of [false, true]) {
      const entries = original.entries.filter((e) => e.debit === debit && e.account.trim() === MAGIC_ACCOUNT);
      if (entries.length === 0) continue;
      const serviceClass = debit ? '225' : '220';
      const batchNumber = num(batches.length + 1, 7);
      // Returns come back under the class they were sent in; the service reads PPD and CCD.
      const sec = original.sec === 'CCD' ? 'CCD' : 'PPD';
      const records = [
        record([
          '5',
          serviceClass,
          original.companyName,
          ' '.repeat(20),
          original.companyIdentification,
          sec,
          'RETURN    ',
          ' '.repeat(6),
          date,
          '   ', // settlement date: the ACH operator's
          '1',
          rdfi8,
          batchNumber,
        ]),
      ];
      let amount = 0;
      for (const e of entries) {
        sequence += 1;
        const trace = rdfi8 + num(sequence, 7);
        amount += e.amountCents;
        records.push(
          record([
            '6',
            e.transactionCode[0] + (debit ? '6' : '1'),
            odfiRouting, // the return goes back to the ODFI
            e.account,
            num(e.amountCents, 10),
            e.individualId,
            e.individualName,
            '  ',
            '1',
            trace,
          ]),
          record([
            '7',
            '99',
            code,
            e.trace,
            ' '.repeat(6), // date of death
            e.routing.slice(0, 8), // the original RDFI
            ' '.repeat(44),
            trace,
          ]),
        );
      }
      const hash = Number(original.odfi8) * entries.length;
      const totals = { count: entries.length * 2, hash, debit: debit ? amount : 0, credit: debit ? 0 : amount };
      records.push(
        record([
          '8',
          serviceClass,
          num(totals.count, 6),
          num(hash % 10_000_000_000, 10),
          num(totals.debit, 12),
          num(totals.credit, 12),
          original.companyIdentification,
          ' '.repeat(19),
          ' '.repeat(6),
          rdfi8,
          batchNumber,
        ]),
      );
      batches.push({ records, ...totals });
    }
  }

  const fileHeader = record([
    '1',
    '01',
    ` ${firstBatch.odfi8}${checkDigit(firstBatch.odfi8)}`, // immediate destination: the ODFI
    ` ${rdfiRouting}`, // immediate origin: the returning bank
    date,
    hhmm(createdAt),
    'A',
    '094',
    '10',
    '1',
    ' '.repeat(23),
    'SANDBOX BANK'.padEnd(23, ' '),
    ' '.repeat(8),
  ]);
  const sum = (key: keyof Omit<ReturnBatch, 'records'>) => batches.reduce((total, b) => total + b[key], 0);
  const recordCount = 2 + batches.reduce((total, b) => total + b.records.length, 0);
  const fileControl = record([
    '9',
    num(batches.length, 6),
    num(Math.ceil(recordCount / BLOCKING_FACTOR), 6),
    num(sum('count'), 8),
    num(sum('hash') % 10_000_000_000, 10),
    num(sum('debit'), 12),
    num(sum('credit'), 12),
    ' '.repeat(39),
  ]);
  const lines = [fileHeader, ...batches.flatMap((b) => b.records), fileControl];
  while (lines.length % BLOCKING_FACTOR !== 0) lines.push(FILLER);
  return lines.join('\n');
}
