import { withCheckDigit } from '../domain/aba.js';
import {
  type AccountType,
  type BankReportItem,
  isDishonoredOrContested,
  isReturnCode,
  parseCorrectedData,
} from '../domain/returns.js';

/*
 * The NACHA file a bank sends an originator back: return entries (addenda type 99: the return reason code and the
 * original entry's trace number) and notifications of change (batches with SEC code COR, addenda type 98: the
 * change code, the original trace number and the corrected data). The whole file is checked before anything of
 * it is used: every field a record's layout requires, record order, each batch control against its header and its
 * entries, and the file control against the file. A file with any problem is refused whole, with its problems (the
 * first 50 listed, the rest counted).
 */

const RECORD_LENGTH = 94;
const BLOCKING_FACTOR = 10;
const FILLER = '9'.repeat(RECORD_LENGTH);
/** A refused file's answer lists this many problems and counts the rest: enough to fix a file, and bounded. */
const MAX_PROBLEMS = 50;
/** Past this many problems the body is not a return file: reading stops, so any body is read in bounded memory. */
const STOP_AFTER = 1_000;
/** The end-of-file mark (Ctrl-Z) some banks' systems still write as a file's last byte. */
const CTRL_Z = String.fromCharCode(0x1a);

export interface ReturnFileProblem {
  /** 1-based line of the file. */
  line: number;
  message: string;
}

export type ReturnFileReading = { ok: true; items: BankReportItem[] } | { ok: false; problems: ReturnFileProblem[] };

/** Every change code a notification of change may carry; the service applies those in `CORRECTIONS`, records the rest. */
const CHANGE_CODE = /^C(0[1-9]|1[34])$/;

// ---------------------------------------------------------------------------------------------------------------
// The record layouts (NACHA Operating Rules, Appendix Three), positions 1-based and inclusive as the rules print them.

interface Format {
  test: (value: string) => boolean;
  /** What a value of `width` characters must be, for the message: "is not <describe>". */
  describe: (width: number) => string;
}

interface Field {
  label: string;
  from: number;
  to: number;
  format: Format;
  /** An optional field may be all blanks; a required one may not (a record cut short loses it). */
  optional: boolean;
  /** Why the rule is what it is, added to the message. */
  why?: string;
}

interface Layout<K extends string> {
  record: string;
  fields: Record<K, Field>;
}

function isDate(value: string): boolean {
  if (!/^\d{6}$/.test(value)) return false;
  const month = Number(value.slice(2, 4));
  const day = Number(value.slice(4, 6));
  const date = new Date(Date.UTC(2000 + Number(value.slice(0, 2)), month - 1, day));
  return month >= 1 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const DIGITS: Format = { test: (v) => /^\d+$/.test(v), describe: (width) => `${width} digits` };
const TEXT: Format = { test: (v) => v.trim() !== '', describe: () => 'filled in' };
const DATE: Format = { test: isDate, describe: () => 'a date (YYMMDD)' };
const matching = (pattern: RegExp, what: string): Format => ({ test: (v) => pattern.test(v), describe: () => what });
const oneOf = (...values: string[]): Format => ({
  test: (v) => values.includes(v),
  describe: () => values.map((v) => `"${v}"`).join(' or '),
});
const TIME = matching(/^([01]\d|2[0-3])[0-5]\d$/, 'a time (HHMM)');
const SERVICE_CLASS = oneOf('200', '220', '225');
/** The "return or NOC" codes of checking (2x), savings (3x), general ledger (4x) and loan (5x) accounts: x1 credits, x6 debits. */
const RETURN_OR_NOC_CODE = matching(
  /^[2-5][16]$/,
  'a "return or NOC" transaction code (21, 26, 31, 36, 41, 46, 51 or 56)',
);
/** Banks fill the date of death of a return not about a death with zeros as often as with blanks. */
const DATE_OR_ZEROS: Format = { test: (v) => v === '000000' || isDate(v), describe: () => 'a date (YYMMDD) or 000000' };
const DEATH_CODES = ['R14', 'R15'];

const required = (label: string, from: number, to: number, format: Format, why?: string): Field => ({
  label,
  from,
  to,
  format,
  why,
  optional: false,
});
const optional = (label: string, from: number, to: number, format: Format = TEXT): Field => ({
  label,
  from,
  to,
  format,
  optional: true,
});

const FILE_HEADER = {
  record: 'file header',
  fields: {
    priority: required('priority code', 2, 3, oneOf('01')),
    destination: required(
      'immediate destination',
      4,
      13,
      matching(/^( \d{9}|\d{10})$/, 'a blank and 9 digits, or 10 digits'),
    ),
    origin: required('immediate origin', 14, 23, TEXT),
    date: required('file creation date', 24, 29, DATE),
    time: optional('file creation time', 30, 33, TIME),
    modifier: required('file ID modifier', 34, 34, matching(/^[A-Z0-9]$/, 'an upper-case letter or a digit')),
    recordSize: required('record size', 35, 37, oneOf('094')),
    blocking: required('blocking factor', 38, 39, oneOf('10')),
    formatCode: required('format code', 40, 40, oneOf('1')),
    destinationName: optional('immediate destination name', 41, 63),
    originName: optional('immediate origin name', 64, 86),
    reference: optional('reference code', 87, 94),
  },
} satisfies Layout<string>;

const BATCH_HEADER = {
  record: 'batch header',
  fields: {
    serviceClass: required('service class code', 2, 4, SERVICE_CLASS),
    companyName: required('company name', 5, 20, TEXT),
    discretionary: optional('company discretionary data', 21, 40),
    companyId: required('company identification', 41, 50, TEXT),
    sec: required(
      'standard entry class code',
      51,
      53,
      oneOf('PPD', 'CCD', 'COR'),
      'entries come back under the class they were sent in (PPD, CCD), notifications of change as COR',
    ),
    description: required('company entry description', 54, 63, TEXT),
    descriptiveDate: optional('company descriptive date', 64, 69),
    effectiveDate: required('effective entry date', 70, 75, DATE),
    // The ACH operator's Julian day; blank in files that did not pass one.
    settlementDate: optional(
      'settlement date',
      76,
      78,
      matching(/^(00[1-9]|0[1-9]\d|[12]\d\d|3[0-5]\d|36[0-6])$/, 'a day of the year'),
    ),
    originatorStatus: required('originator status code', 79, 79, oneOf('0', '1', '2')),
    odfi: required('originating DFI identification', 80, 87, DIGITS),
    batchNumber: required('batch number', 88, 94, DIGITS),
  },
} satisfies Layout<string>;

const ENTRY = {
  record: 'entry detail',
  fields: {
    transactionCode: required(
      'transaction code',
      2,
      3,
      RETURN_OR_NOC_CODE,
      'a return or a notification of change carries one; 22 or 23 is a live credit or a prenote',
    ),
    rdfi: required('receiving DFI identification', 4, 11, DIGITS),
    checkDigit: required('check digit', 12, 12, DIGITS),
    account: required('DFI account number', 13, 29, TEXT),
    amount: required('amount', 30, 39, DIGITS),
    individualId: optional('individual identification number', 40, 54),
    // Copied from the original entry, which may have left it blank; nothing here reads it.
    individualName: optional('individual name', 55, 76),
    discretionary: optional('discretionary data', 77, 78),
    addendaIndicator: required(
      'addenda record indicator',
      79,
      79,
      oneOf('1'),
      'a returned or corrected entry must carry an addenda record (addenda indicator 1)',
    ),
    trace: required('trace number', 80, 94, DIGITS),
  },
} satisfies Layout<string>;

const RETURN_ADDENDA = {
  record: 'return addenda',
  fields: {
    reason: required('return reason code', 4, 6, TEXT),
    originalTrace: required('original entry trace number', 7, 21, DIGITS),
    dateOfDeath: optional('date of death', 22, 27, DATE_OR_ZEROS),
    originalRdfi: required('original receiving DFI identification', 28, 35, DIGITS),
    information: optional('addenda information', 36, 79),
    trace: required('trace number', 80, 94, DIGITS),
  },
} satisfies Layout<string>;

const CHANGE_ADDENDA = {
  record: 'notification of change addenda',
  fields: {
    change: required('change code', 4, 6, TEXT),
    originalTrace: required('original entry trace number', 7, 21, DIGITS),
    reserved: optional('reserved field', 22, 27),
    originalRdfi: required('original receiving DFI identification', 28, 35, DIGITS),
    // Read by `parseCorrectedData`: data the service cannot apply is recorded as unusable, not a malformed file.
    corrected: optional('corrected data', 36, 64),
    reserved2: optional('reserved field', 65, 79),
    trace: required('trace number', 80, 94, DIGITS),
  },
} satisfies Layout<string>;

const BATCH_CONTROL = {
  record: 'batch control',
  fields: {
    serviceClass: required('service class code', 2, 4, SERVICE_CLASS),
    count: required('entry/addenda count', 5, 10, DIGITS),
    hash: required('entry hash', 11, 20, DIGITS),
    debit: required('total debit', 21, 32, DIGITS),
    credit: required('total credit', 33, 44, DIGITS),
    companyId: required('company identification', 45, 54, TEXT),
    mac: optional('message authentication code', 55, 73),
    reserved: optional('reserved field', 74, 79),
    odfi: required('originating DFI identification', 80, 87, DIGITS),
    batchNumber: required('batch number', 88, 94, DIGITS),
  },
} satisfies Layout<string>;

const FILE_CONTROL = {
  record: 'file control',
  fields: {
    batches: required('batch count', 2, 7, DIGITS),
    blocks: required('block count', 8, 13, DIGITS),
    count: required('entry/addenda count', 14, 21, DIGITS),
    hash: required('entry hash', 22, 31, DIGITS),
    debit: required('total debit', 32, 43, DIGITS),
    credit: required('total credit', 44, 55, DIGITS),
    reserved: optional('reserved field', 56, 94),
  },
} satisfies Layout<string>;

const slice = (raw: string, field: Field) => raw.slice(field.from - 1, field.to);

/** The line without blanks or tabs past its 94th character: padding, not part of the record. */
function withoutPadding(line: string): string {
  if (line.length <= RECORD_LENGTH) return line;
  return /^[ \t]*$/.test(line.slice(RECORD_LENGTH)) ? line.slice(0, RECORD_LENGTH) : line;
}

/** What is wrong with one field of a record, if anything. */
function fieldProblem(raw: string, record: string, field: Field): string | undefined {
  const value = slice(raw, field);
  const where = field.from === field.to ? `position ${field.from}` : `positions ${field.from}-${field.to}`;
  const name = `The ${record}'s ${field.label} (${where})`;
  if (value.trim() === '') return field.optional ? undefined : `${name} is missing`;
  if (field.format.test(value)) return undefined;
  const why = field.why ? `: ${field.why}` : '';
  return `${name} "${value}" is not ${field.format.describe(field.to - field.from + 1)}${why}`;
}

/** A record read by its layout: any field's text, or a field's text only when it is well formed. */
interface Fields<K extends string> {
  get: (key: K) => string;
  valid: (key: K) => string | undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading.

interface Totals {
  count: number;
  hash: number;
  debit: number;
  credit: number;
}

interface BatchTally extends Totals {
  line: number;
  cor: boolean;
  /** The header's company identification as written, for the items. */
  company: string;
  /** The header's fields its control must repeat, when well formed. */
  header: Partial<Record<'serviceClass' | 'companyId' | 'odfi' | 'batchNumber', string>>;
}

interface EntryTally {
  line: number;
  trace: string;
  cents: number;
}

/**
 * The file's records with their line numbers: a byte-order mark and a final Ctrl-Z are dropped, blank lines are
 * skipped, and a file sent without line breaks is cut every 94 characters. Records are yielded as they are: the
 * reader decides what a short one may have lost. Yielded one at a time, so reading can stop early.
 */
function* recordsOf(text: string): Generator<{ n: number; raw: string }> {
  let body = text.replace(/^\uFEFF/, '');
  if (body.endsWith(CTRL_Z)) body = body.slice(0, -1);
  if (!/[\r\n]/.test(body) && body.length > RECORD_LENGTH && body.length % RECORD_LENGTH === 0) {
    for (let at = 0; at < body.length; at += RECORD_LENGTH)
      yield { n: at / RECORD_LENGTH + 1, raw: body.slice(at, at + RECORD_LENGTH) };
    return;
  }
  let n = 0;
  let start = 0;
  for (const end of body.matchAll(/\r\n?|\n/g)) {
    n += 1;
    const raw = body.slice(start, end.index);
    if (raw.trim() !== '') yield { n, raw };
    start = end.index + end[0].length;
  }
  if (body.slice(start).trim() !== '') yield { n: n + 1, raw: body.slice(start) };
}

/** Reads a bank's return / notification-of-change file. Nothing is returned unless all of it is well formed. */
export function parseReturnFile(text: string): ReturnFileReading {
  const reader = new ReturnFileReader();
  let last: number | undefined;
  for (const { n, raw } of recordsOf(text)) {
    reader.read(n, raw);
    last = n;
    if (reader.problems.count >= STOP_AFTER) return { ok: false, problems: reader.problems.list(n) };
  }
  if (last === undefined) return { ok: false, problems: [{ line: 1, message: 'The file is empty' }] };
  reader.finish(last);
  return reader.result();
}

/**
 * The problems a refused file's answer lists: the first MAX_PROBLEMS + 1 in line order (the extra one says where
 * the unlisted ones begin), and a count of all. Bounded whatever the body.
 */
class ProblemList {
  private readonly kept: ReturnFileProblem[] = [];
  private total = 0;

  get count() {
    return this.total;
  }

  add(problem: ReturnFileProblem) {
    this.total += 1;
    // Problems arrive nearly in line order (a missing addenda is noticed a record late): look from the end.
    let at = this.kept.length;
    while (at > 0 && this.kept[at - 1]!.line > problem.line) at -= 1;
    if (at > MAX_PROBLEMS) return;
    this.kept.splice(at, 0, problem);
    if (this.kept.length > MAX_PROBLEMS + 1) this.kept.pop();
  }

  /** `stoppedAt`: the line reading stopped on, when it did. */
  list(stoppedAt?: number): ReturnFileProblem[] {
    if (this.count <= MAX_PROBLEMS) return [...this.kept];
    const stopped = stoppedAt === undefined ? '' : `; reading stopped at line ${stoppedAt}`;
    return [
      ...this.kept.slice(0, MAX_PROBLEMS),
      {
        line: this.kept[MAX_PROBLEMS]!.line,
        message: `${this.count - MAX_PROBLEMS} more problems, from this line on, are not listed${stopped}`,
      },
    ];
  }
}

/**
 * One pass over the records, in the order the rules allow: a file header, batches (a batch header, each entry
 * followed by its addenda, a batch control), a file control, then only filler. Every problem is noted and reading
 * goes on (up to STOP_AFTER problems), so one answer names what to fix.
 */
class ReturnFileReader {
  readonly problems = new ProblemList();
  private readonly items: BankReportItem[] = [];
  private state: 'start' | 'file' | 'batch' | 'entry' | 'end' = 'start';
  private batch: BatchTally | undefined;
  private entry: EntryTally | undefined;
  private readonly file: Totals & { batches: number } = { batches: 0, count: 0, hash: 0, debit: 0, credit: 0 };
  private lastBatchNumber: number | undefined;
  private sawBatch = false;
  /** The records of the file, its filler included, for the block count. */
  private records = 0;
  private pastTheEnd = false;
  private declaredBlocks: { line: number; blocks: string | undefined } | undefined;
  /** The length of the record being read, as it arrived. */
  private length = RECORD_LENGTH;

  private fail(line: number, message: string) {
    this.problems.add({ line, message });
  }

  /**
   * A record shorter than 94 characters is read padded with blanks: what it lacks is accepted as blank only if every
   * field its layout requires is still there and well formed (checked in `parse`). Blanks or tabs past 94 are
   * dropped (some banks' software pads lines). A longer record is refused, and its first 94 characters still read, so
   * that the records after it are not reported as out of place.
   */
  read(n: number, text: string) {
    const line = withoutPadding(text);
    if (this.state === 'end') return this.afterFileControl(n, line);
    this.records += 1;
    if (line.length > RECORD_LENGTH)
      this.fail(n, `A record is ${RECORD_LENGTH} characters; this one is ${line.length}`);
    this.length = Math.min(line.length, RECORD_LENGTH);
    const raw = line.slice(0, RECORD_LENGTH).padEnd(RECORD_LENGTH, ' ');
    const bad = raw.search(/[^\x20-\x7E]/);
    if (bad >= 0) this.fail(n, `Position ${bad + 1} holds a character that is not printable ASCII`);
    if (this.state === 'start' && raw[0] !== '1') {
      this.fail(n, 'The file must open with a file header record (type 1)');
      this.state = 'file';
    }
    if (this.state === 'entry' && raw[0] !== '7') {
      this.fail(this.entry!.line, 'An entry of a return file must be followed by its addenda record (type 7)');
      this.state = 'batch';
    }
    this.dispatch(n, raw);
  }

  private dispatch(n: number, raw: string) {
    switch (raw[0]) {
      case '1':
        return this.fileHeader(n, raw);
      case '5':
        return this.batchHeader(n, raw);
      case '6':
        return this.entryDetail(n, raw);
      case '7':
        return this.addenda(n, raw);
      case '8':
        return this.batchControl(n, raw);
      case '9':
        return this.fileControl(n, raw);
      default:
        this.fail(n, `"${raw[0]}" is not a NACHA record type`);
    }
  }

  /** Checks every field of the record by its layout; a record that arrived short is explained once, first. */
  private parse<K extends string>(n: number, raw: string, layout: Layout<K>): Fields<K> {
    const bad = new Set<K>();
    for (const key of Object.keys(layout.fields) as K[]) {
      const message = fieldProblem(raw, layout.record, layout.fields[key]);
      if (message === undefined) continue;
      if (bad.size === 0 && this.length < RECORD_LENGTH)
        this.fail(
          n,
          `The record is ${this.length} character${this.length === 1 ? '' : 's'}: a record may be shorter than ${RECORD_LENGTH} only when what it lacks is blanks, and this one lacks what its layout requires`,
        );
      bad.add(key);
      this.fail(n, message);
    }
    const get = (key: K) => slice(raw, layout.fields[key]);
    return { get, valid: (key) => (bad.has(key) ? undefined : get(key)) };
  }

  /** Filler completes the last block; anything else is past the end of the file, reported once and not read. */
  private afterFileControl(n: number, line: string) {
    if (line === FILLER) {
      this.records += 1;
      return;
    }
    if (this.pastTheEnd) return;
    this.pastTheEnd = true;
    if (line[0] === '1') this.fail(n, 'A file header record (type 1) may only open the file: post one file at a time');
    else this.fail(n, 'Only filler records (all 9s) may follow the file control record');
  }

  private fileHeader(n: number, raw: string) {
    if (this.state !== 'start') {
      this.fail(n, 'A file header record (type 1) may only open the file');
      return;
    }
    this.parse(n, raw, FILE_HEADER);
    this.state = 'file';
  }

  private batchHeader(n: number, raw: string) {
    this.sawBatch = true;
    if (this.state !== 'file')
      this.fail(n, 'A batch header record (type 5) must follow the file header or a batch control');
    const rec = this.parse(n, raw, BATCH_HEADER);
    const number = rec.valid('batchNumber');
    if (number !== undefined) {
      if (this.lastBatchNumber !== undefined && Number(number) <= this.lastBatchNumber)
        this.fail(
          n,
          `The batch number ${number} does not follow the previous batch's ${this.lastBatchNumber}: batch numbers ascend`,
        );
      this.lastBatchNumber = Number(number);
    }
    this.batch = {
      line: n,
      cor: rec.get('sec') === 'COR',
      company: rec.get('companyId'),
      header: {
        serviceClass: rec.valid('serviceClass'),
        companyId: rec.valid('companyId'),
        odfi: rec.valid('odfi'),
        batchNumber: number,
      },
      count: 0,
      hash: 0,
      debit: 0,
      credit: 0,
    };
    this.state = 'batch';
  }

  private entryDetail(n: number, raw: string) {
    const batch = this.batch;
    if (this.state !== 'batch' || !batch) {
      this.fail(n, 'An entry detail record (type 6) must be inside a batch');
      return;
    }
    const rec = this.parse(n, raw, ENTRY);
    const rdfi = rec.valid('rdfi');
    const check = rec.valid('checkDigit');
    if (rdfi !== undefined && check !== undefined && withCheckDigit(rdfi) !== rdfi + check)
      this.fail(
        n,
        `The check digit ${check} is not the receiving DFI identification ${rdfi}'s (${withCheckDigit(rdfi)[8]})`,
      );
    const cents = Number(rec.valid('amount') ?? 0);
    const code = rec.valid('transactionCode');
    // Returns of debits end in 6 (26, 36…), of credits in 1.
    const debit = code?.[1] === '6';
    this.checkEntryInBatch(n, rec, batch, cents, code === undefined ? undefined : debit);
    batch.count += 1;
    batch.hash += Number(rdfi ?? 0);
    if (debit) batch.debit += cents;
    else batch.credit += cents;
    this.entry = { line: n, trace: rec.get('trace'), cents };
    this.state = 'entry';
  }

  /** What an entry must agree on with its batch: who originated it, what the batch carries. */
  private checkEntryInBatch(n: number, rec: Fields<'trace'>, batch: BatchTally, cents: number, debit?: boolean) {
    const trace = rec.valid('trace');
    const odfi = batch.header.odfi;
    if (trace !== undefined && odfi !== undefined && !trace.startsWith(odfi))
      this.fail(n, `The trace number ${trace} does not begin with its batch's originating DFI identification ${odfi}`);
    if (batch.cor && cents !== 0)
      this.fail(n, `A notification of change (COR) entry carries no amount; this one carries ${cents} cents`);
    const serviceClass = batch.header.serviceClass;
    if (debit === true && serviceClass === '220')
      this.fail(n, `A debit entry cannot be in a credits-only batch (service class 220, line ${batch.line})`);
    if (debit === false && serviceClass === '225')
      this.fail(n, `A credit entry cannot be in a debits-only batch (service class 225, line ${batch.line})`);
  }

  private addenda(n: number, raw: string) {
    const batch = this.batch;
    const entry = this.entry;
    if (this.state !== 'entry' || !batch || !entry) {
      this.fail(n, 'An addenda record (type 7) must follow an entry detail record');
      return;
    }
    batch.count += 1;
    this.state = 'batch';
    const addendaType = raw.slice(1, 3);
    const expected = batch.cor ? '98' : '99';
    if (addendaType !== expected) {
      this.fail(n, `A ${batch.cor ? 'COR' : 'return'} entry's addenda type is ${expected}, not "${addendaType}"`);
      return;
    }
    if (batch.cor) this.changeAddenda(n, raw, batch, entry);
    else this.returnAddenda(n, raw, batch, entry);
  }

  private sameTrace(n: number, rec: Fields<'trace'>, entry: EntryTally) {
    const trace = rec.valid('trace');
    if (trace !== undefined && trace !== entry.trace)
      this.fail(n, "The addenda's trace number is not its entry's trace number");
  }

  private returnAddenda(n: number, raw: string, batch: BatchTally, entry: EntryTally) {
    const rec = this.parse(n, raw, RETURN_ADDENDA);
    this.sameTrace(n, rec, entry);
    const code = rec.valid('reason');
    const original = rec.valid('originalTrace');
    if (code === undefined) return;
    if (DEATH_CODES.includes(code) && rec.valid('dateOfDeath') === '000000')
      this.fail(n, `An ${code} return's date of death (positions 22-27) is the date of the death, not 000000`);
    // The service has no item for them: applied as a return, they would count money back that never came.
    if (isDishonoredOrContested(code))
      this.fail(
        n,
        `${code}: dishonored or contested returns (R61-R77) are settled with your bank: post the file without that entry`,
      );
    else if (!isReturnCode(code)) this.fail(n, `"${code}" is not a return reason code`);
    else if (original !== undefined)
      this.items.push({
        type: 'return',
        trace_number: original,
        code,
        line: n,
        company_identification: batch.company,
        amount_cents: entry.cents,
      });
  }

  private changeAddenda(n: number, raw: string, batch: BatchTally, entry: EntryTally) {
    const rec = this.parse(n, raw, CHANGE_ADDENDA);
    this.sameTrace(n, rec, entry);
    const code = rec.valid('change');
    const original = rec.valid('originalTrace');
    if (code === undefined) return;
    if (!CHANGE_CODE.test(code)) {
      this.fail(n, `"${code}" is not a change code`);
      return;
    }
    if (original === undefined) return;
    // Data the service cannot apply does not block the rest of the file: it is recorded as not applied. A
    // correction has no amount_cents: its entry's amount is zero by rule (checked above), there is nothing to compare.
    const corrected = parseCorrectedData(code, rec.get('corrected'));
    this.items.push({
      type: 'correction',
      trace_number: original,
      code,
      line: n,
      company_identification: batch.company,
      ...(typeof corrected === 'string' ? { corrected: {}, unusable: corrected } : { corrected }),
    });
  }

  private batchControl(n: number, raw: string) {
    const batch = this.batch;
    if (this.state !== 'batch' || !batch) {
      this.fail(n, 'A batch control record (type 8) must close a batch');
      return;
    }
    const rec = this.parse(n, raw, BATCH_CONTROL);
    for (const key of ['serviceClass', 'companyId', 'odfi', 'batchNumber'] as const) {
      const control = rec.valid(key);
      const header = batch.header[key];
      if (control !== undefined && header !== undefined && control !== header)
        this.fail(
          n,
          `The batch control's ${BATCH_CONTROL.fields[key].label} "${control}" is not its batch header's "${header}" (line ${batch.line})`,
        );
    }
    this.compareTotals(n, 'batch', rec, batch);
    this.file.batches += 1;
    this.file.count += batch.count;
    this.file.hash += batch.hash;
    this.file.debit += batch.debit;
    this.file.credit += batch.credit;
    this.batch = undefined;
    this.state = 'file';
  }

  private fileControl(n: number, raw: string) {
    if (raw === FILLER) {
      // Read as a file control, filler would only yield a list of wrong counts: name what is missing instead.
      this.fail(n, 'The file has no file control record: filler (all 9s) comes where it should be');
      this.state = 'end';
      return;
    }
    if (this.state !== 'file') {
      this.fail(n, 'The file control record (type 9) must follow the last batch control');
      this.state = 'end';
      return;
    }
    const rec = this.parse(n, raw, FILE_CONTROL);
    if (!this.sawBatch) this.fail(n, 'A return file carries at least one batch');
    const batches = rec.valid('batches');
    if (batches !== undefined && Number(batches) !== this.file.batches)
      this.fail(n, `The file control counts ${Number(batches)} batches; the file has ${this.file.batches}`);
    this.compareTotals(n, 'file', rec, this.file);
    // Checked at the end of the file: the filler that follows belongs to the last block.
    this.declaredBlocks = { line: n, blocks: rec.valid('blocks') };
    this.state = 'end';
  }

  /** A control record's count, hash and totals against those of the records it closes. */
  private compareTotals(n: number, what: 'batch' | 'file', rec: Fields<keyof Totals>, tally: Totals) {
    const layout = what === 'batch' ? BATCH_CONTROL : FILE_CONTROL;
    // The entry hash keeps the rightmost 10 digits of the sum.
    const actual: Totals = { ...tally, hash: tally.hash % 10_000_000_000 };
    for (const key of ['count', 'hash', 'debit', 'credit'] as const) {
      const text = rec.valid(key);
      if (text !== undefined && Number(text) !== actual[key])
        this.fail(
          n,
          `The ${what} control's ${layout.fields[key].label} is ${Number(text)}; the ${what} adds up to ${actual[key]}`,
        );
    }
  }

  /** What can only be told once every record is read: what was left open, and the block count. */
  finish(lastLine: number) {
    if (this.state === 'entry')
      this.fail(this.entry!.line, 'An entry of a return file must be followed by its addenda record (type 7)');
    if (this.batch) this.fail(lastLine, `The batch that opens on line ${this.batch.line} has no batch control record`);
    if (this.state !== 'end') {
      this.fail(lastLine, 'The file has no file control record');
      return;
    }
    const blocks = Math.ceil(this.records / BLOCKING_FACTOR);
    const declared = this.declaredBlocks;
    if (declared?.blocks !== undefined && Number(declared.blocks) !== blocks)
      this.fail(
        declared.line,
        `The file control's block count is ${Number(declared.blocks)}; the file's ${this.records} records make ${blocks} blocks of ${BLOCKING_FACTOR}`,
      );
  }

  result(): ReturnFileReading {
    if (this.problems.count === 0) return { ok: true, items: this.items };
    return { ok: false, problems: this.problems.list() };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The sandbox's bank: writes the return file a receiving bank would send, so simulated returns take the same path.

export interface SimulatedReturn {
  originalTrace: string;
  code: string;
  amountCents: number;
  routingNumber: string;
  accountLast4: string;
  accountType: AccountType;
  individualId: string;
}

const alpha = (value: string, width: number) => value.slice(0, width).padEnd(width, ' ');
const num = (value: number, width: number) => String(value).padStart(width, '0').slice(-width);

/** A return file from `rdfi` (9 digits) to `odfi` (9 digits), one PPD batch, one entry and addenda per return. */
export function writeReturnFile(
  odfi: string,
  rdfi: string,
  companyIdentification: string,
  at: Date,
  returns: readonly SimulatedReturn[],
): string {
  const iso = at.toISOString();
  const date = iso.slice(2, 10).replaceAll('-', '');
  const odfi8 = odfi.slice(0, 8);
  const rdfi8 = rdfi.slice(0, 8);
  const lines = [
    `101 ${odfi} ${rdfi}${date}${iso.slice(11, 13)}${iso.slice(14, 16)}A094101${alpha('ODFI', 23)}${alpha('SANDBOX RDFI', 23)}${' '.repeat(8)}`,
    `5220${alpha('SANDBOX RETURNS', 16)}${' '.repeat(20)}${alpha(companyIdentification, 10)}PPDRETURN    ${' '.repeat(6)}${date}   1${rdfi8}0000001`,
  ];
  let hash = 0;
  let credit = 0;
  for (const [i, r] of returns.entries()) {
    const trace = `${rdfi8}${num(i + 1, 7)}`;
    hash += Number(odfi8);
    credit += r.amountCents;
    lines.push(
      `6${r.accountType === 'savings' ? '31' : '21'}${withCheckDigit(odfi8)}${alpha(`XXXXX${r.accountLast4}`, 17)}${num(r.amountCents, 10)}${alpha(r.individualId, 15)}${alpha('RETURNED DEPOSIT', 22)}  1${trace}`,
      `799${r.code}${r.originalTrace}${' '.repeat(6)}${r.routingNumber.slice(0, 8)}${' '.repeat(44)}${trace}`,
    );
  }
  const count = returns.length * 2;
  lines.push(
    `8220${num(count, 6)}${num(hash, 10)}${num(0, 12)}${num(credit, 12)}${alpha(companyIdentification, 10)}${' '.repeat(25)}${rdfi8}0000001`,
  );
  const records = lines.length + 1;
  const blocks = Math.ceil(records / 10);
  lines.push(
    `9000001${num(blocks, 6)}${num(count, 8)}${num(hash, 10)}${num(0, 12)}${num(credit, 12)}${' '.repeat(39)}`,
  );
  while (lines.length % 10 !== 0) lines.push(FILLER);
  return lines.join('\n');
}
