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
 * it is used: record lengths and order, every addenda, and each batch's and the file's counts, hash and totals.
 */

const RECORD_LENGTH = 94;
const FILLER = '9'.repeat(RECORD_LENGTH);

export interface ReturnFileProblem {
  /** 1-based line of the file. */
  line: number;
  message: string;
}

export type ReturnFileReading = { ok: true; items: BankReportItem[] } | { ok: false; problems: ReturnFileProblem[] };

/** Every change code a notification of change may carry; the service applies those in `CORRECTIONS`, records the rest. */
const CHANGE_CODE = /^C(0[1-9]|1[34])$/;

interface BatchTally {
  line: number;
  cor: boolean;
  company: string;
  count: number;
  hash: number;
  debit: number;
  credit: number;
}

/**
 * The file's records with their line numbers, read as banks' own software reads what arrives: a byte-order mark is
 * dropped, blank lines are skipped, a record whose trailing blanks were trimmed in transit is padded back to 94
 * characters, and a file sent without line breaks is cut every 94 characters.
 */
function recordsOf(text: string): { n: number; raw: string }[] {
  const body = text.replace(/^\uFEFF/, '');
  if (!/[\r\n]/.test(body) && body.length > RECORD_LENGTH && body.length % RECORD_LENGTH === 0)
    return Array.from({ length: body.length / RECORD_LENGTH }, (_, i) => ({
      n: i + 1,
      raw: body.slice(i * RECORD_LENGTH, (i + 1) * RECORD_LENGTH),
    }));
  return body
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((raw, i) => ({ n: i + 1, raw: raw.length < RECORD_LENGTH ? raw.padEnd(RECORD_LENGTH, ' ') : raw }))
    .filter((r) => r.raw.trim() !== '');
}

/** Reads a bank's return / notification-of-change file. Nothing is returned unless all of it is well formed. */
export function parseReturnFile(text: string): ReturnFileReading {
  const lines = recordsOf(text);
  const problems: ReturnFileProblem[] = [];
  const items: BankReportItem[] = [];
  const fail = (line: number, message: string) => problems.push({ line, message });
  if (lines.length === 0) return { ok: false, problems: [{ line: 1, message: 'The file is empty' }] };

  let state: 'start' | 'file' | 'batch' | 'entry' | 'end' = 'start';
  let batch: BatchTally | undefined;
  let entry: { line: number; trace: string } | undefined;
  let file = { batches: 0, count: 0, hash: 0, debit: 0, credit: 0 };

  for (const { n, raw } of lines) {
    if (raw.length !== RECORD_LENGTH) {
      fail(n, `A record is ${RECORD_LENGTH} characters; this one is ${raw.length}`);
      continue;
    }
    const type = raw[0];
    if (state === 'end') {
      if (raw === FILLER) continue;
      if (type !== '1') {
        fail(n, 'Only filler records (all 9s), or the header of another file, may follow a file control record');
        continue;
      }
      // Several files sent as one: each is checked on its own.
      state = 'start';
      file = { batches: 0, count: 0, hash: 0, debit: 0, credit: 0 };
    }
    if (state === 'entry' && type !== '7') {
      fail(entry!.line, 'An entry of a return file must be followed by its addenda record (type 7)');
      state = 'batch';
    }
    switch (type) {
      case '1':
        if (state !== 'start') fail(n, 'A file header record (type 1) may only open the file');
        state = 'file';
        break;
      case '5': {
        if (state !== 'file') fail(n, 'A batch header record (type 5) must follow the file header or a batch control');
        const sec = raw.slice(50, 53);
        if (!/^[A-Z]{3}$/.test(sec)) fail(n, `The standard entry class code "${sec}" is not valid`);
        batch = { line: n, cor: sec === 'COR', company: raw.slice(40, 50), count: 0, hash: 0, debit: 0, credit: 0 };
        state = 'batch';
        break;
      }
      case '6': {
        if (state !== 'batch' || !batch) {
          fail(n, 'An entry detail record (type 6) must be inside a batch');
          break;
        }
        const code = raw.slice(1, 3);
        const rdfi = raw.slice(3, 11);
        const amount = raw.slice(29, 39);
        const trace = raw.slice(79, 94);
        if (!/^\d{2}$/.test(code)) fail(n, `The transaction code "${code}" is not 2 digits`);
        if (!/^\d{8}$/.test(rdfi)) fail(n, 'The receiving DFI identification is not 8 digits');
        if (!/^\d{10}$/.test(amount)) fail(n, 'The amount is not 10 digits');
        if (!/^\d{15}$/.test(trace)) fail(n, 'The trace number is not 15 digits');
        if (raw[78] !== '1')
          fail(n, 'A returned or corrected entry must carry an addenda record (addenda indicator 1)');
        batch.count += 1;
        batch.hash += Number(rdfi) || 0;
        const cents = Number(amount) || 0;
        // Debit transaction codes end in 5–9 (27, 37, 26…), credits in 0–4.
        if (Number(code[1]) >= 5) batch.debit += cents;
        else batch.credit += cents;
        entry = { line: n, trace };
        state = 'entry';
        break;
      }
      case '7': {
        if (state !== 'entry' || !batch) {
          fail(n, 'An addenda record (type 7) must follow an entry detail record');
          break;
        }
        batch.count += 1;
        state = 'batch';
        const addendaType = raw.slice(1, 3);
        const code = raw.slice(3, 6);
        const original = raw.slice(6, 21);
        const expected = batch.cor ? '98' : '99';
        if (addendaType !== expected) {
          fail(n, `A ${batch.cor ? 'COR' : 'return'} entry's addenda type is ${expected}, not "${addendaType}"`);
          break;
        }
        if (!/^\d{15}$/.test(original)) {
          fail(n, `The original entry trace number "${original.trim()}" is not 15 digits`);
          break;
        }
        if (raw.slice(79, 94) !== entry!.trace) fail(n, "The addenda's trace number is not its entry's trace number");
        const company = batch.company;
        if (!batch.cor) {
          if (isDishonoredOrContested(code))
            fail(n, `${code} is a dishonored or contested return, not a return of an entry: settle it with your bank`);
          else if (!isReturnCode(code)) fail(n, `"${code}" is not a return reason code`);
          else items.push({ type: 'return', trace_number: original, code, line: n, company_identification: company });
          break;
        }
        if (!CHANGE_CODE.test(code)) {
          fail(n, `"${code}" is not a change code`);
          break;
        }
        // Data the service cannot apply does not block the rest of the file: it is recorded as not applied.
        const corrected = parseCorrectedData(code, raw.slice(35, 64));
        items.push({
          type: 'correction',
          trace_number: original,
          code,
          line: n,
          company_identification: company,
          ...(typeof corrected === 'string' ? { corrected: {}, unusable: corrected } : { corrected }),
        });
        break;
      }
      case '8': {
        if (state !== 'batch' || !batch) {
          fail(n, 'A batch control record (type 8) must close a batch');
          break;
        }
        checkControl(raw, n, batch, 'batch', fail, {
          count: [4, 10],
          hash: [10, 20],
          debit: [20, 32],
          credit: [32, 44],
        });
        file.batches += 1;
        file.count += batch.count;
        file.hash += batch.hash;
        file.debit += batch.debit;
        file.credit += batch.credit;
        batch = undefined;
        state = 'file';
        break;
      }
      case '9': {
        if (state !== 'file') {
          fail(n, 'The file control record (type 9) must follow the last batch control');
          state = 'end';
          break;
        }
        const batches = Number(raw.slice(1, 7));
        if (batches !== file.batches)
          fail(n, `The file control counts ${batches} batches; the file has ${file.batches}`);
        checkControl(raw, n, file, 'file', fail, {
          count: [13, 21],
          hash: [21, 31],
          debit: [31, 43],
          credit: [43, 55],
        });
        state = 'end';
        break;
      }
      default:
        fail(n, `"${type}" is not a NACHA record type`);
    }
  }
  if (state !== 'end' && problems.length === 0) {
    fail(
      lines.at(-1)?.n ?? 1,
      state === 'start' ? 'The file has no file header record' : 'The file has no file control record',
    );
  }
  if (problems.length > 0) return { ok: false, problems: problems.slice(0, 50) };
  return { ok: true, items };
}

function checkControl(
  raw: string,
  line: number,
  tally: { count: number; hash: number; debit: number; credit: number },
  what: 'batch' | 'file',
  fail: (line: number, message: string) => void,
  at: Record<'count' | 'hash' | 'debit' | 'credit', [number, number]>,
) {
  const field = (name: keyof typeof at) => raw.slice(...at[name]);
  const expect = (name: keyof typeof at, value: number, label: string) => {
    const text = field(name);
    if (!/^\d+$/.test(text)) fail(line, `The ${what} control's ${label} is not numeric`);
    else if (Number(text) !== value)
      fail(line, `The ${what} control's ${label} is ${Number(text)}; the ${what} adds up to ${value}`);
  };
  expect('count', tally.count, 'entry/addenda count');
  expect('hash', tally.hash % 10_000_000_000, 'entry hash');
  expect('debit', tally.debit, 'total debit');
  expect('credit', tally.credit, 'total credit');
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
