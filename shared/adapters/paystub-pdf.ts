import { PDFDocument, StandardFonts, degrees, grayscale, type PDFFont, type PDFPage } from '@pdfme/pdf-lib';
import { isCalendarDate } from '../domain/dates.js';
import { addCents, formatCents, type Cents } from '../domain/money.js';

/**
 * A paystub rendered as a Letter-size PDF: one page, and more only when long names or many deductions need them.
 *
 * Library: `@pdfme/pdf-lib`, the maintained fork of pdf-lib (pdf-lib itself has had no release since 1.17.1 in
 * 2021). It writes the standard 14 fonts by name, so no font file ships with the function, and it was the smallest
 * maintained candidate once bundled: this module minifies to about 590 KB with esbuild, against about 915 KB for
 * pdfkit (which also reads its font metrics from files beside the code, so it breaks when bundled) and about 925 KB
 * for jsPDF. None fits a 250 KB bundle: most of the weight is the metrics of all 14 fonts and code this paystub
 * never calls (PNG, SVG, forms), which these libraries do not let a bundler drop.
 * Only black and greys are used, so that a black-and-white print loses nothing.
 *
 * The output is deterministic: no clock, no random document id; the creation date is the paystub's issued date.
 */

export interface PaystubDocument {
  /** Organization name. */
  employer: { name: string };
  employee: { name: string; employee_id: string };
  paystub_id: string;
  payroll_id: string;
  /** Calendar dates, YYYY-MM-DD. */
  period_start: string;
  period_end: string;
  pay_date: string;
  issued_date: string;
  status: 'issued' | 'voided';
  hours_worked_hundredths: number;
  /** Regular pay in cents, bonuses not included (net = gross_pay + bonuses − deductions_total). */
  gross_pay: Cents;
  bonuses: Cents;
  /** Named amounts in cents: taxes, benefits, retirement, garnishments, other, or any snake_case name. */
  deductions: Record<string, Cents>;
  deductions_total: Cents;
  net_pay: Cents;
  /**
   * Year-to-date totals in cents, shown beside this period's "Gross earnings" and "Net pay": `gross_pay` is
   * therefore earnings before deductions with bonuses included (the repository's YTD gross_pay + bonuses).
   */
  year_to_date: { gross_pay: Cents; net_pay: Cents } | null;
  /** Only the last four digits of the account are ever given: the full number cannot reach the document. */
  payment: {
    method: 'direct_deposit';
    account_type: 'checking' | 'savings';
    account_number_last4: string;
    routing_number: string;
    trace_number: string | null;
    status: string;
    /** The day the deposit settles, YYYY-MM-DD; absent or null when nothing is paid. */
    effective_entry_date?: string | null;
    /**
     * Set once the bank returned the deposit: a NACHA return code (`R03`), its standard reason, and when the
     * return was recorded (ISO 8601). The paystub stays issued: the wages were earned, they were not received.
     */
    return?: { code: string; reason: string; returned_at: string };
  };
}

/** Invalid input: raised before anything is drawn, and never quoting an account or routing number. */
export class PaystubPdfError extends Error {
  override name = 'PaystubPdfError';
}

// Letter, in points; 0.75 in margins.
const PAGE_W = 612;
const PAGE_H = 792;
const MARGIN = 54;
const LEFT = MARGIN;
const RIGHT = PAGE_W - MARGIN;

const INK = grayscale(0);
const MUTED = grayscale(0.38);
const RULE = grayscale(0.72);
const BAND = grayscale(0.93);

/** U+2022 is in WinAnsiEncoding (0x95), so the standard fonts draw it and text extractors read it back. */
export const MASK = '\u2022\u2022\u2022\u2022';

/** `$1,234.56` from integer cents; the digits come from `formatCents`, never from float arithmetic. */
export function formatUsd(cents: Cents): string {
  if (!Number.isSafeInteger(cents)) throw new PaystubPdfError('Amount is not a whole number of cents');
  const text = formatCents(Math.abs(cents));
  const dot = text.indexOf('.');
  const whole = text.slice(0, dot).replace(/\B(?=(\d{3})+$)/g, ',');
  return `${cents < 0 ? '-' : ''}$${whole}${text.slice(dot)}`;
}

/** Hundredths of an hour as `80.00`, from the integer. */
function formatHours(hundredths: number): string {
  if (!Number.isSafeInteger(hundredths) || hundredths < 0) throw new PaystubPdfError('Hours are not whole hundredths');
  const digits = String(hundredths).padStart(3, '0');
  return `${digits.slice(0, -2).replace(/\B(?=(\d{3})+$)/g, ',')}.${digits.slice(-2)}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `2026-03-31` → `Mar 31, 2026`, from the text itself: no Date, so no time zone can shift the day. */
function formatDate(date: string): string {
  if (!isCalendarDate(date)) throw new PaystubPdfError('A date is not YYYY-MM-DD');
  const [y, m, d] = date.split('-');
  return `${MONTHS[Number(m) - 1]} ${Number(d)}, ${y}`;
}

function formatPeriod(start: string, end: string): string {
  const [a, b] = [formatDate(start), formatDate(end)];
  // One year shown once when both ends share it: "Mar 16 – Mar 31, 2026".
  return start.slice(0, 4) === end.slice(0, 4) ? `${a.slice(0, -6)} \u2013 ${b}` : `${a} \u2013 ${b}`;
}

const KNOWN_DEDUCTIONS = ['taxes', 'benefits', 'retirement', 'garnishments', 'other'];
// A client that sends one bare deduction amount has it stored as `{ total }` (see domain/payroll.ts).
const LABELS: Record<string, string> = { total: 'Unitemized deductions' };

/** `health_savings` → `Health Savings`. */
export function deductionLabel(name: string): string {
  return (
    LABELS[name] ??
    name
      .split(/[_\s-]+/)
      .filter(Boolean)
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join(' ')
  );
}

/** Stored maps have no reliable key order: the usual kinds first in a fixed order, then the rest by name. */
function orderedDeductions(deductions: Record<string, Cents>): [string, Cents][] {
  const rank = (k: string) => {
    const i = KNOWN_DEDUCTIONS.indexOf(k);
    return i >= 0 ? i : k === 'total' ? KNOWN_DEDUCTIONS.length + 1 : KNOWN_DEDUCTIONS.length;
  };
  return Object.entries(deductions).sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function checkPayment(p: PaystubDocument['payment']): void {
  // A longer value here would put an account number on the page: refuse it rather than truncate it silently.
  if (!/^\d{4}$/.test(p.account_number_last4))
    throw new PaystubPdfError('account_number_last4 must be exactly 4 digits');
  if (!/^\d{9}$/.test(p.routing_number)) throw new PaystubPdfError('routing_number must be 9 digits');
  if (p.trace_number !== null && !/^\d{15}$/.test(p.trace_number))
    throw new PaystubPdfError('trace_number must be 15 digits');
  if (p.effective_entry_date != null && !isCalendarDate(p.effective_entry_date))
    throw new PaystubPdfError('effective_entry_date must be YYYY-MM-DD');
  if (p.return !== undefined) {
    if (!/^R\d{2}$/.test(p.return.code)) throw new PaystubPdfError('The return code must be R and two digits');
    if (!isPrintable(p.return.reason, 200))
      throw new PaystubPdfError('The return reason must be printable text of at most 200 characters');
    returnedDay(p.return.returned_at);
  }
}

/** Text fit to print: not blank, bounded, and without control, format (bidi, zero-width) or unassigned characters. */
function isPrintable(text: string, max: number): boolean {
  return text.trim().length > 0 && text.length <= max && !/\p{C}/u.test(text);
}

/** The UTC calendar day of an ISO 8601 timestamp with a zone (`2026-11-21T10:02:28.752Z` → `2026-11-21`). */
function returnedDay(timestamp: string): string {
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
  // The zone makes the instant, and so its UTC day, the same whatever the machine's time zone.
  const ms = zoned.test(timestamp) && isCalendarDate(timestamp.slice(0, 10)) ? Date.parse(timestamp) : Number.NaN;
  if (Number.isNaN(ms)) throw new PaystubPdfError('returned_at must be an ISO 8601 timestamp with a time zone');
  return new Date(ms).toISOString().slice(0, 10);
}

interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
}

// Latin letters with no decomposition to a bare letter, so NFD below cannot simplify them.
const FALLBACK: Record<string, string> = {
  '\u0141': 'L',
  '\u0142': 'l',
  '\u0110': 'D',
  '\u0111': 'd',
  '\u0126': 'H',
  '\u0127': 'h',
  '\u0131': 'i',
};

const charsets = new WeakMap<PDFFont, Set<number>>();

/**
 * Free text (names, ids) reduced to what the standard fonts can encode (WinAnsi), because pdf-lib throws on any
 * other character: whitespace collapsed, accents dropped where only the bare letter exists, anything else '?'.
 * An unusual name must never stop a paystub from rendering.
 */
function encodable(font: PDFFont, text: string): string {
  let charset = charsets.get(font);
  if (!charset) {
    charset = new Set(font.getCharacterSet());
    charsets.set(font, charset);
  }
  const has = (c: string) => charset.has(c.codePointAt(0)!);
  let out = '';
  for (const ch of text.replace(/\s+/g, ' ').trim()) {
    if (has(ch)) out += ch;
    else {
      const bare = FALLBACK[ch] ?? ch.normalize('NFD').replace(/\p{M}/gu, '');
      out += bare && [...bare].every(has) ? bare : '?';
    }
  }
  return out;
}

/**
 * The width the text is drawn at. pdf-lib's `widthOfTextAtSize` subtracts the fonts' kerning pairs, but `drawText`
 * writes an unkerned string, so right-aligned text measured that way would stick out past the margin.
 */
function advance(font: PDFFont, text: string, size: number): number {
  let w = 0;
  for (const ch of text) w += font.widthOfTextAtSize(ch, size);
  return w;
}

/**
 * Encodable text broken into lines no wider than `width` at `size`: at spaces, and a word wider than the line on its
 * own (an id, a run of letters) between characters. Nothing is ever cut: every character is on some line.
 */
function breakLines(font: PDFFont, text: string, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (advance(font, next, size) <= width) {
      line = next;
      continue;
    }
    if (line) lines.push(line);
    line = '';
    for (const ch of word) {
      if (line && advance(font, line + ch, size) > width) {
        lines.push(line);
        line = '';
      }
      line += ch;
    }
  }
  if (line || lines.length === 0) lines.push(line);
  return lines;
}

/** Measured lines of text: the size they are set at and how far apart their baselines are. */
interface Block {
  lines: string[];
  size: number;
  leading: number;
  font: PDFFont;
  /** The widest line, as drawn. */
  width: number;
}

/**
 * Text laid out in `width`: at the largest size from `size` down to `minSize` (half a point at a time) at which it
 * takes at most `maxLines` lines; failing that, at `minSize` on as many lines as it needs. Never cut.
 */
function block(font: PDFFont, raw: string, width: number, size: number, minSize = size, maxLines = 1): Block {
  const text = encodable(font, raw);
  let s = size;
  let lines = breakLines(font, text, s, width);
  while (lines.length > maxLines && s - 0.5 >= minSize) {
    s -= 0.5;
    lines = breakLines(font, text, s, width);
  }
  return {
    lines,
    size: s,
    leading: Math.round(s * 1.22 * 2) / 2,
    font,
    width: Math.max(...lines.map((l) => advance(font, l, s))),
  };
}

/** The height a block takes below its first baseline (its other lines). */
const below = (b: Block) => b.leading * (b.lines.length - 1);

/** The size at which one line of text fits `width`, from `size` down to `minSize`; `minSize` if none does. */
function sizeToFit(font: PDFFont, text: string, width: number, size: number, minSize: number): number {
  let s = size;
  while (s - 0.5 >= minSize && advance(font, text, s) > width) s -= 0.5;
  return s;
}

type Gray = ReturnType<typeof grayscale>;

const LABEL_SIZE = 7;
const LABEL_TRACK = 0.6;

class Canvas {
  page!: PDFPage;

  constructor(readonly fonts: Fonts) {}

  text(
    text: string,
    x: number,
    y: number,
    opts: { size?: number; bold?: boolean; color?: Gray; align?: 'left' | 'right' } = {},
  ): void {
    const font = opts.bold ? this.fonts.bold : this.fonts.regular;
    const size = opts.size ?? 9.5;
    const t = encodable(font, text);
    const dx = opts.align === 'right' ? advance(font, t, size) : 0;
    this.page.drawText(t, { x: x - dx, y, size, font, color: opts.color ?? INK });
  }

  /** A block's lines from the baseline `y` down; right-aligned lines end at `x`. */
  lines(b: Block, x: number, y: number, opts: { color?: Gray; align?: 'left' | 'right' } = {}): void {
    b.lines.forEach((line, i) => {
      const dx = opts.align === 'right' ? advance(b.font, line, b.size) : 0;
      this.page.drawText(line, {
        x: x - dx,
        y: y - b.leading * i,
        size: b.size,
        font: b.font,
        color: opts.color ?? INK,
      });
    });
  }

  labelWidth(text: string): number {
    const chars = [...text.toUpperCase()];
    return chars.reduce((w, ch) => w + advance(this.fonts.bold, ch, LABEL_SIZE) + LABEL_TRACK, 0) - LABEL_TRACK;
  }

  /** Section and column labels: small bold capitals with a little tracking, the one device for hierarchy. */
  label(text: string, x: number, y: number, align: 'left' | 'right' = 'left'): void {
    let cx = align === 'right' ? x - this.labelWidth(text) : x;
    for (const ch of text.toUpperCase()) {
      this.page.drawText(ch, { x: cx, y, size: LABEL_SIZE, font: this.fonts.bold, color: MUTED });
      cx += advance(this.fonts.bold, ch, LABEL_SIZE) + LABEL_TRACK;
    }
  }

  rule(y: number, thickness = 0.5, color = RULE, x1 = LEFT, x2 = RIGHT): void {
    this.page.drawLine({ start: { x: x1, y }, end: { x: x2, y }, thickness, color });
  }
}

/**
 * The columns of the earnings and deductions tables (points from the left edge), exported so that the layout tests
 * can check that no text crosses the gutter between them.
 */
export const TABLE_COLUMNS = (() => {
  const colW = (RIGHT - LEFT - 28) / 2;
  return { earnings: [LEFT, LEFT + colW], deductions: [LEFT + colW + 28, RIGHT] } as const;
})();

/** The page's text area: every character drawn lies inside it. */
export const TEXT_AREA = { left: LEFT, right: RIGHT, bottom: MARGIN, top: PAGE_H - MARGIN } as const;

export async function renderPaystubPdf(doc: PaystubDocument): Promise<Buffer> {
  checkPayment(doc.payment);
  const voided = doc.status === 'voided';
  const p = doc.payment;
  // The API sets both together; either one is enough to say so.
  const returned = p.return !== undefined || p.status === 'returned';

  // Every value is formatted (and so validated) before the first drawing call.
  const period = formatPeriod(doc.period_start, doc.period_end);
  const payDate = formatDate(doc.pay_date);
  const issued = formatDate(doc.issued_date);
  const gross = addCents(doc.gross_pay, doc.bonuses);
  const money = {
    regular: formatUsd(doc.gross_pay),
    bonuses: formatUsd(doc.bonuses),
    gross: formatUsd(gross),
    deductions: formatUsd(doc.deductions_total),
    net: formatUsd(doc.net_pay),
    ytdGross: doc.year_to_date ? formatUsd(doc.year_to_date.gross_pay) : '\u2014',
    ytdNet: doc.year_to_date ? formatUsd(doc.year_to_date.net_pay) : '\u2014',
  };
  const settles = p.effective_entry_date ? formatDate(p.effective_entry_date) : null;
  const how = p.return
    ? `: ${p.return.code} ${p.return.reason}, on ${formatDate(returnedDay(p.return.returned_at))}`
    : '';
  const returnNotice = returned
    ? `Deposit returned by the bank${how}. The wages remain earned; this statement is not a record of payment.`
    : null;
  const hours = formatHours(doc.hours_worked_hundredths);
  const deductions = orderedDeductions(doc.deductions).map(
    ([name, cents]) => [deductionLabel(name), formatUsd(cents)] as const,
  );

  const pdf = await PDFDocument.create({ updateMetadata: false });
  pdf.setTitle(`Earnings statement ${doc.paystub_id}`);
  pdf.setSubject(`${doc.employer.name}: ${doc.employee.name}, ${period}`);
  pdf.setCreator('Payroll API');
  pdf.setCreationDate(new Date(`${doc.issued_date}T00:00:00Z`));
  pdf.setModificationDate(new Date(`${doc.issued_date}T00:00:00Z`));
  const fonts: Fonts = {
    regular: await pdf.embedFont(StandardFonts.Helvetica),
    bold: await pdf.embedFont(StandardFonts.HelveticaBold),
  };
  const { regular, bold } = fonts;
  const c = new Canvas(fonts);
  const gap = 12;

  // The footer is measured first: the body flows down to just above it, onto further pages when it must.
  const note = 'Amounts in US dollars. Keep this statement for your records.';
  const noteW = advance(regular, note, 7.5);
  // `page 99 of 99` is the widest the page numbers get; the id wraps (never cut) in what is left.
  const footerFor = (text: string) => block(regular, text, RIGHT - LEFT - noteW - 2 * gap, 7.5, 6, 1);
  const footerH = below(footerFor(`Earnings statement ${doc.paystub_id} \u00b7 page 99 of 99`));
  // The footer's last baseline: its descenders (a fifth of the size) rest on the bottom margin.
  const footY = MARGIN + 2;
  const BOTTOM = footY + 14 + footerH + 16;

  const pages: PDFPage[] = [];
  let y = 0;
  const newPage = () => {
    c.page = pdf.addPage([PAGE_W, PAGE_H]);
    pages.push(c.page);
    y = PAGE_H - MARGIN - 14;
    if (pages.length > 1) {
      const head = block(regular, `Earnings statement ${doc.paystub_id} (continued)`, RIGHT - LEFT, 9, 7, 1);
      c.lines(head, LEFT, y, { color: MUTED });
      y -= below(head) + 8;
      c.rule(y, 0.75, INK);
      y -= 16;
    }
  };
  /** Room for `h` points below the cursor, on a new page when this one is full; true when a page was added. */
  const need = (h: number): boolean => {
    if (y - h >= BOTTOM) return false;
    newPage();
    return true;
  };
  newPage();

  // Header: who pays, what this is; the pay date on the right where the eye looks for it. The employer's name wraps
  // in the width the pay date leaves.
  const payDateW = Math.max(c.labelWidth('Pay date'), advance(bold, payDate, 12));
  const employer = block(bold, doc.employer.name, RIGHT - LEFT - payDateW - 2 * gap, 18, 12, 2);
  c.lines(employer, LEFT, y);
  c.label('Pay date', RIGHT, y + 6, 'right');
  c.text(payDate, RIGHT, y - 9, { size: 12, bold: true, align: 'right' });
  y -= Math.max(below(employer), 9) + 18;
  c.text('Earnings Statement', LEFT, y, { size: 11, color: MUTED });
  y -= 14;
  c.rule(y, 1.5, INK);

  if (voided) {
    y -= 28;
    const white = grayscale(1);
    const why = block(regular, 'This paystub has been voided. It is not a record of payment.', RIGHT - LEFT - 68, 9.5);
    const h = 26 + below(why);
    c.page.drawRectangle({ x: LEFT, y: y - 8 - below(why), width: RIGHT - LEFT, height: h, color: INK });
    c.text('VOID', LEFT + 12, y, { size: 12, bold: true, color: white });
    c.lines(why, LEFT + 56, y + 0.5, { color: white });
    y -= 8 + below(why);
  }

  if (returnNotice) {
    // Outlined where VOID is filled: the paystub stands, only the deposit failed. Placed above the net pay, which
    // this deposit did not deliver.
    y -= 16;
    const textX = LEFT + 18;
    const notice = block(regular, returnNotice, RIGHT - 12 - textX, 9.5, 9.5, 99);
    const height = 28 + 12.5 * notice.lines.length;
    c.page.drawRectangle({ x: LEFT, y: y - height, width: RIGHT - LEFT, height, borderColor: INK, borderWidth: 1 });
    c.page.drawRectangle({ x: LEFT, y: y - height, width: 4, height, color: INK });
    c.text('DEPOSIT RETURNED', textX, y - 16, { size: 11, bold: true });
    c.lines({ ...notice, leading: 12.5 }, textX, y - 31);
    y -= height;
  }

  // Employee on the left, the statement's references on the right: keys in a column, values right-aligned in theirs
  // (ids wrap between characters if ever wider than it), the name wrapping in what the references leave.
  y -= 26;
  const top = y;
  const refs: [string, string][] = [
    ['Pay period', period],
    ['Pay date', payDate],
    ['Issued', issued],
    ['Paystub ID', doc.paystub_id],
    ['Payroll ID', doc.payroll_id],
  ];
  const keyW = Math.max(...refs.map(([k]) => advance(regular, k, 9)));
  const valueMax = 190;
  const values = refs.map(([, v]) => block(regular, v, valueMax, 9, 7, 1));
  const valueW = Math.max(...values.map((b) => b.width));
  const keyX = RIGHT - valueW - gap - keyW;
  let ry = top;
  refs.forEach(([k], i) => {
    const v = values[i]!;
    c.text(k, keyX, ry, { size: 9, color: MUTED });
    c.lines(v, RIGHT, ry, { align: 'right' });
    ry -= 14 + below(v);
  });

  const leftW = keyX - 2 * gap - LEFT;
  c.label('Employee', LEFT, y);
  const name = block(bold, doc.employee.name, leftW, 14, 10, 2);
  c.lines(name, LEFT, y - 17);
  const empId = block(regular, `Employee ID  ${doc.employee.employee_id}`, leftW, 9, 7, 1);
  const idY = y - 17 - below(name) - 15;
  c.lines(empId, LEFT, idY, { color: MUTED });
  y = Math.min(idY - below(empId) - 4, ry + 4);

  // Net pay: the one number every reader wants, in a band that stays visible in greyscale. The amount is set as
  // large as leaves the sentence beside it 200 points; the sentence wraps in what is left.
  y -= 22;
  const inner = RIGHT - 16 - (LEFT + 18);
  const netSize = sizeToFit(bold, money.net, inner - 200 - gap, 26, 12);
  const netW = advance(bold, money.net, netSize);
  const sub = block(
    regular,
    `Gross earnings ${money.gross}, less deductions ${money.deductions}`,
    Math.max(inner - netW - 2 * gap, advance(bold, 'NET PAY', 13)),
    8.5,
    8.5,
    99,
  );
  const bandH = Math.max(50, 37 + below(sub) + 13);
  need(bandH);
  c.page.drawRectangle({ x: LEFT, y: y - bandH, width: RIGHT - LEFT, height: bandH, color: BAND });
  c.page.drawRectangle({ x: LEFT, y: y - bandH, width: 4, height: bandH, color: INK });
  c.text('NET PAY', LEFT + 18, y - 22, { size: 13, bold: true });
  c.lines(sub, LEFT + 18, y - 37, { color: MUTED });
  c.text(money.net, RIGHT - 16, y - bandH / 2 - netSize * 0.33, { size: netSize, bold: true, align: 'right' });
  y -= bandH;

  // Earnings and deductions side by side, each a small table with its own total. Column widths come from the
  // widest figure in them; a figure wider than a third of its table is set smaller; names wrap in the rest.
  y -= 30;
  const [eL, eR] = TABLE_COLUMNS.earnings;
  const [dL, dR] = TABLE_COLUMNS.deductions;
  const colW = eR - eL;
  const row = 17;
  const figure = (texts: string[], minW: number) => {
    const size = Math.min(...texts.map((t) => sizeToFit(bold, t, colW / 3, 9.5, 6)));
    return { size, width: Math.max(minW, ...texts.map((t) => advance(bold, t, size))) };
  };
  const eAmt = figure([money.regular, money.bonuses, money.gross], c.labelWidth('Current'));
  const eHrs = figure([hours], c.labelWidth('Hours'));
  const hoursR = eR - eAmt.width - gap;
  const dAmt = figure([money.deductions, ...deductions.map(([, a]) => a)], c.labelWidth('Current'));

  const heads = (suffix: string) => {
    c.label(`Earnings${suffix}`, eL, y);
    c.label('Hours', hoursR, y, 'right');
    c.label('Current', eR, y, 'right');
    c.rule(y - 6, 0.75, INK, eL, eR);
    c.label(`Deductions${suffix}`, dL, y);
    c.label('Current', dR, y, 'right');
    c.rule(y - 6, 0.75, INK, dL, dR);
    y -= 20;
  };
  need(20 + row * 3);
  heads('');

  // Each table flows down on its own, a row at a time, onto a further page (headed again) when the next row does
  // not fit; all deduction names are set at one size, the largest at which each fits its line.
  type Row = { name: Block; figures: { text: string; right: number; size: number }[]; muted?: boolean };
  const eNameW = hoursR - eHrs.width - gap - eL;
  const eRows: Row[] = [
    {
      name: block(regular, 'Regular pay', eNameW, 9.5, 7, 1),
      figures: [
        { text: hours, right: hoursR, size: eHrs.size },
        { text: money.regular, right: eR, size: eAmt.size },
      ],
    },
    {
      name: block(regular, 'Bonuses', eNameW, 9.5, 7, 1),
      figures: [{ text: money.bonuses, right: eR, size: eAmt.size }],
    },
  ];
  const dNameW = colW - dAmt.width - gap;
  const dNameSize = Math.min(9.5, ...deductions.map(([label]) => block(regular, label, dNameW, 9.5, 8, 1).size));
  const dRows: Row[] =
    deductions.length === 0
      ? [{ name: block(regular, 'None', dNameW, 9.5), figures: [], muted: true }]
      : deductions.map(([label, amount]) => ({
          name: block(regular, label, dNameW, dNameSize),
          figures: [{ text: amount, right: dR, size: dAmt.size }],
        }));
  const rowH = (r: Row) => row + below(r.name);
  /** Rows from `from` down from the cursor while they fit (at least one on a fresh page); the next row's index. */
  const fill = (rows: Row[], from: number, l: number, r: number, fresh: boolean): [number, number] => {
    let ty = y;
    let i = from;
    while (i < rows.length && (ty - rowH(rows[i]!) - 6 >= BOTTOM || (fresh && i === from))) {
      const { name, figures, muted } = rows[i]!;
      c.lines(name, l, ty, muted ? { color: MUTED } : {});
      for (const f of figures) c.text(f.text, f.right, ty, { size: f.size, align: 'right' });
      c.rule(ty - 6 - below(name), 0.4, RULE, l, r);
      ty -= rowH(rows[i]!);
      i++;
    }
    return [i, ty];
  };
  let [ei, di, fresh] = [0, 0, false];
  for (;;) {
    const [nextE, ey] = fill(eRows, ei, eL, eR, fresh);
    const [nextD, dy] = fill(dRows, di, dL, dR, fresh);
    [ei, di] = [nextE, nextD];
    y = Math.min(ey, dy);
    if (ei === eRows.length && di === dRows.length) break;
    newPage();
    heads(' (continued)');
    fresh = true;
  }

  // Totals on one baseline under the longer table, so both read as one line.
  const eTotal = block(bold, 'Gross earnings', eNameW, 9.5, 7, 1);
  const dTotal = block(bold, 'Total deductions', dNameW, 9.5, 7, 1);
  if (need(row + Math.max(below(eTotal), below(dTotal)))) heads(' (continued)');
  y -= 2;
  c.rule(y + 11, 0.75, INK, eL, eR);
  c.rule(y + 11, 0.75, INK, dL, dR);
  c.lines(eTotal, eL, y);
  c.text(hours, hoursR, y, { size: eHrs.size, bold: true, align: 'right' });
  c.text(money.gross, eR, y, { size: eAmt.size, bold: true, align: 'right' });
  c.lines(dTotal, dL, y);
  c.text(money.deductions, dR, y, { size: dAmt.size, bold: true, align: 'right' });
  y -= Math.max(below(eTotal), below(dTotal));

  // This period beside the year to date: each column as wide as its widest figure.
  const sumSize = Math.min(
    ...[money.gross, money.net, money.ytdGross, money.ytdNet].map((t) => sizeToFit(regular, t, 150, 9.5, 6)),
  );
  const ytdW = Math.max(
    c.labelWidth('Year to date'),
    ...[money.ytdGross, money.ytdNet].map((t) => advance(regular, t, sumSize)),
  );
  const curW = Math.max(
    c.labelWidth('This period'),
    ...[money.gross, money.net].map((t) => advance(regular, t, sumSize)),
  );
  const amtR = RIGHT;
  const curR = Math.min(RIGHT - 130, amtR - ytdW - 2 * gap);
  const sumNameW = curR - curW - gap - LEFT;
  const summary = [
    { name: block(regular, 'Gross earnings', sumNameW, 9.5, 7, 1), now: money.gross, ytd: money.ytdGross },
    { name: block(regular, 'Net pay', sumNameW, 9.5, 7, 1), now: money.net, ytd: money.ytdNet },
  ];
  y -= 40;
  need(20 + summary.reduce((h, r) => h + row + below(r.name), 0));
  c.label('Summary', LEFT, y);
  c.label('This period', curR, y, 'right');
  c.label('Year to date', amtR, y, 'right');
  c.rule(y - 6, 0.75, INK);
  y -= 20;
  for (const { name, now, ytd } of summary) {
    c.lines(name, LEFT, y);
    c.text(now, curR, y, { size: sumSize, align: 'right' });
    c.text(ytd, amtR, y, { size: sumSize, align: 'right' });
    c.rule(y - 6 - below(name), 0.4, RULE);
    y -= row + below(name);
  }

  // The deposit: where the money went, with only the last four digits of the account. The sentence wraps in the
  // width the amount leaves.
  y -= 23;
  const payAmt = figure([money.net], c.labelWidth('Amount'));
  const status = returned ? 'returned' : p.status.replace(/_/g, ' ');
  const deposit = block(
    regular,
    `Direct deposit to ${p.account_type} ${MASK}${p.account_number_last4}, routing ${p.routing_number}, trace ${p.trace_number ?? 'not yet assigned'}, status ${status}`,
    RIGHT - LEFT - payAmt.width - 2 * gap,
    9,
    7.5,
    1,
  );
  const settlement = settles
    ? block(regular, `Settlement date (effective entry date) ${settles}`, RIGHT - LEFT - payAmt.width - 2 * gap, 8.5)
    : null;
  need(20 + below(deposit) + (settlement ? 13 + below(settlement) : 0) + 8);
  c.label('Payment', LEFT, y);
  c.label('Amount', RIGHT, y, 'right');
  c.rule(y - 6, 0.75, INK);
  y -= 20;
  c.lines(deposit, LEFT, y);
  c.text(money.net, RIGHT, y, { size: payAmt.size, bold: true, align: 'right' });
  y -= below(deposit);
  if (settlement) {
    y -= 13;
    c.lines(settlement, LEFT, y, { color: MUTED });
    y -= below(settlement);
  }
  c.rule(y - 6, 0.4, RULE);

  // Footers, now that the number of pages is known.
  pages.forEach((page, i) => {
    c.page = page;
    const left = footerFor(`Earnings statement ${doc.paystub_id} \u00b7 page ${i + 1} of ${pages.length}`);
    c.rule(footY + 14 + below(left), 0.4, RULE);
    c.lines(left, LEFT, footY + below(left), { color: MUTED });
    c.text(note, RIGHT, footY, { size: 7.5, color: MUTED, align: 'right' });
  });

  if (voided) {
    // Over everything on every page, translucent: nothing drawn later (the net pay band) can hide it, every figure
    // stays legible through it, a mid grey survives black-and-white printing, and no page of it passes for valid.
    const size = 180;
    const w = advance(bold, 'VOID', size);
    const angle = (35 * Math.PI) / 180;
    const [cx, cy] = [PAGE_W / 2, PAGE_H / 2 - 20];
    const h = size * 0.36; // half the cap height: the glyphs' optical centre above the baseline
    for (const page of pages)
      page.drawText('VOID', {
        x: cx - (w / 2) * Math.cos(angle) + h * Math.sin(angle),
        y: cy - (w / 2) * Math.sin(angle) - h * Math.cos(angle),
        size,
        font: bold,
        color: grayscale(0.35),
        opacity: 0.22,
        rotate: degrees(35),
      });
  }

  const bytes = await pdf.save();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
