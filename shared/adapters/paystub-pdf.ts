import { PDFDocument, StandardFonts, degrees, grayscale, type PDFFont, type PDFPage } from '@pdfme/pdf-lib';
import { isCalendarDate } from '../domain/dates.js';
import { addCents, formatCents, type Cents } from '../domain/money.js';

/**
 * A paystub rendered as a one-page, Letter-size PDF.
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
 * Text made to fit `width` so it cannot run into the next column: first set smaller, down to `minSize` (names and
 * ids are best shown whole), then shortened with an ellipsis.
 */
function fit(
  font: PDFFont,
  text: string,
  size: number,
  minSize: number,
  width: number,
): { text: string; size: number } {
  for (let s = size; s >= minSize; s -= 0.5) if (advance(font, text, s) <= width) return { text, size: s };
  let t = text;
  while (t.length > 1 && advance(font, `${t}\u2026`, minSize) > width) t = t.slice(0, -1);
  return { text: `${t.trimEnd()}\u2026`, size: minSize };
}

/** Encodable text broken into lines no wider than `width`, at word boundaries (a longer word is cut with `fit`). */
function wrap(font: PDFFont, text: string, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of encodable(font, text).split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (advance(font, next, size) <= width) line = next;
    else {
      if (line) lines.push(line);
      line = advance(font, word, size) <= width ? word : fit(font, word, size, size, width).text;
    }
  }
  if (line) lines.push(line);
  return lines;
}

type Gray = ReturnType<typeof grayscale>;

class Canvas {
  constructor(
    readonly page: PDFPage,
    readonly fonts: Fonts,
  ) {}

  text(
    text: string,
    x: number,
    y: number,
    opts: {
      size?: number;
      minSize?: number;
      bold?: boolean;
      color?: Gray;
      align?: 'left' | 'right';
      maxWidth?: number;
    } = {},
  ): void {
    const font = opts.bold ? this.fonts.bold : this.fonts.regular;
    const wanted = opts.size ?? 9.5;
    let t = { text: encodable(font, text), size: wanted };
    if (opts.maxWidth !== undefined) t = fit(font, t.text, wanted, opts.minSize ?? wanted, opts.maxWidth);
    const dx = opts.align === 'right' ? advance(font, t.text, t.size) : 0;
    this.page.drawText(t.text, { x: x - dx, y, size: t.size, font, color: opts.color ?? INK });
  }

  /** Section and column labels: small bold capitals with a little tracking, the one device for hierarchy. */
  label(text: string, x: number, y: number, align: 'left' | 'right' = 'left'): void {
    const spaced = text.toUpperCase();
    const size = 7;
    const track = 0.6;
    const advances = [...spaced].map((ch) => advance(this.fonts.bold, ch, size) + track);
    let cx = align === 'right' ? x - (advances.reduce((a, b) => a + b, 0) - track) : x;
    [...spaced].forEach((ch, i) => {
      this.page.drawText(ch, { x: cx, y, size, font: this.fonts.bold, color: MUTED });
      cx += advances[i]!;
    });
  }

  rule(y: number, thickness = 0.5, color = RULE, x1 = LEFT, x2 = RIGHT): void {
    this.page.drawLine({ start: { x: x1, y }, end: { x: x2, y }, thickness, color });
  }
}

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
  const page = pdf.addPage([PAGE_W, PAGE_H]);
  const c = new Canvas(page, fonts);

  // Header: who pays, what this is; the pay date on the right where the eye looks for it.
  let y = PAGE_H - MARGIN - 14;
  c.text(doc.employer.name, LEFT, y, { size: 18, minSize: 12, bold: true, maxWidth: 360 });
  c.label('Pay date', RIGHT, y + 6, 'right');
  c.text(payDate, RIGHT, y - 9, { size: 12, bold: true, align: 'right' });
  y -= 18;
  c.text('Earnings Statement', LEFT, y, { size: 11, color: MUTED });
  y -= 14;
  c.rule(y, 1.5, INK);

  if (voided) {
    y -= 28;
    page.drawRectangle({ x: LEFT, y: y - 8, width: RIGHT - LEFT, height: 26, color: INK });
    c.text('VOID', LEFT + 12, y, { size: 12, bold: true, color: grayscale(1) });
    c.text('This paystub has been voided. It is not a record of payment.', LEFT + 56, y + 0.5, {
      size: 9.5,
      color: grayscale(1),
    });
    y -= 8;
  }

  if (returnNotice) {
    // Outlined where VOID is filled: the paystub stands, only the deposit failed. Placed above the net pay, which
    // this deposit did not deliver.
    y -= 16;
    const textX = LEFT + 18;
    const lines = wrap(fonts.regular, returnNotice, 9.5, RIGHT - 12 - textX);
    const height = 28 + 12.5 * lines.length;
    page.drawRectangle({
      x: LEFT,
      y: y - height,
      width: RIGHT - LEFT,
      height,
      borderColor: INK,
      borderWidth: 1,
    });
    page.drawRectangle({ x: LEFT, y: y - height, width: 4, height, color: INK });
    c.text('DEPOSIT RETURNED', textX, y - 16, { size: 11, bold: true });
    for (const [i, line] of lines.entries()) c.text(line, textX, y - 31 - 12.5 * i);
    y -= height;
  }

  // Employee on the left, the statement's references on the right.
  y -= 26;
  const top = y;
  c.label('Employee', LEFT, y);
  c.text(doc.employee.name, LEFT, y - 17, { size: 14, minSize: 9, bold: true, maxWidth: 250 });
  c.text(`Employee ID  ${doc.employee.employee_id}`, LEFT, y - 32, {
    size: 9,
    minSize: 7,
    color: MUTED,
    maxWidth: 250,
  });

  const keyX = 322;
  const refs: [string, string][] = [
    ['Pay period', period],
    ['Pay date', payDate],
    ['Issued', issued],
    ['Paystub ID', doc.paystub_id],
    ['Payroll ID', doc.payroll_id],
  ];
  let ry = top;
  for (const [k, v] of refs) {
    c.text(k, keyX, ry, { size: 9, color: MUTED });
    c.text(v, RIGHT, ry, { size: 9, minSize: 7, align: 'right', maxWidth: RIGHT - keyX - 58 });
    ry -= 14;
  }
  y = Math.min(top - 36, ry + 4);

  // Net pay: the one number every reader wants, in a band that stays visible in greyscale.
  y -= 22;
  const bandH = 50;
  page.drawRectangle({ x: LEFT, y: y - bandH, width: RIGHT - LEFT, height: bandH, color: BAND });
  page.drawRectangle({ x: LEFT, y: y - bandH, width: 4, height: bandH, color: INK });
  c.text('NET PAY', LEFT + 18, y - 22, { size: 13, bold: true });
  c.text(`Gross earnings ${money.gross}, less deductions ${money.deductions}`, LEFT + 18, y - 37, {
    size: 8.5,
    color: MUTED,
  });
  c.text(money.net, RIGHT - 16, y - 33, { size: 26, bold: true, align: 'right' });
  y -= bandH;

  // Earnings and deductions side by side, each a small table with its own total.
  y -= 30;
  const colW = (RIGHT - LEFT - 28) / 2;
  const eL = LEFT;
  const eR = LEFT + colW;
  const dL = eR + 28;
  const dR = RIGHT;
  const row = 17;

  const tableHead = (l: number, r: number, title: string, cols: [string, number][]) => {
    c.label(title, l, y);
    for (const [name, x] of cols) c.label(name, x, y, 'right');
    c.rule(y - 6, 0.75, INK, l, r);
  };
  tableHead(eL, eR, 'Earnings', [
    ['Hours', eR - 80],
    ['Current', eR],
  ]);
  tableHead(dL, dR, 'Deductions', [['Current', dR]]);

  let ey = y - 6 - 14;
  const earnings: [string, string, string][] = [
    ['Regular pay', hours, money.regular],
    ['Bonuses', '', money.bonuses],
  ];
  for (const [name, h, amount] of earnings) {
    c.text(name, eL, ey);
    if (h) c.text(h, eR - 80, ey, { align: 'right' });
    c.text(amount, eR, ey, { align: 'right' });
    c.rule(ey - 6, 0.4, RULE, eL, eR);
    ey -= row;
  }

  let dy = y - 6 - 14;
  if (deductions.length === 0) {
    c.text('None', dL, dy, { color: MUTED });
    c.rule(dy - 6, 0.4, RULE, dL, dR);
    dy -= row;
  }
  for (const [name, amount] of deductions) {
    c.text(name, dL, dy, { minSize: 8, maxWidth: colW - 80 });
    c.text(amount, dR, dy, { align: 'right' });
    c.rule(dy - 6, 0.4, RULE, dL, dR);
    dy -= row;
  }

  // Totals on one baseline under the longer table, so both read as one line.
  const totalY = Math.min(ey, dy) - 2;
  c.rule(totalY + 11, 0.75, INK, eL, eR);
  c.rule(totalY + 11, 0.75, INK, dL, dR);
  c.text('Gross earnings', eL, totalY, { bold: true });
  c.text(hours, eR - 80, totalY, { bold: true, align: 'right' });
  c.text(money.gross, eR, totalY, { bold: true, align: 'right' });
  c.text('Total deductions', dL, totalY, { bold: true });
  c.text(money.deductions, dR, totalY, { bold: true, align: 'right' });
  y = totalY;

  // This period beside the year to date.
  y -= 40;
  const amtR = RIGHT;
  const curR = RIGHT - 130;
  c.label('Summary', LEFT, y);
  c.label('This period', curR, y, 'right');
  c.label('Year to date', amtR, y, 'right');
  c.rule(y - 6, 0.75, INK);
  y -= 20;
  const summary: [string, string, string][] = [
    ['Gross earnings', money.gross, money.ytdGross],
    ['Net pay', money.net, money.ytdNet],
  ];
  for (const [k, now, ytd] of summary) {
    c.text(k, LEFT, y);
    c.text(now, curR, y, { align: 'right' });
    c.text(ytd, amtR, y, { align: 'right' });
    c.rule(y - 6, 0.4, RULE);
    y -= row;
  }

  // The deposit: where the money went, with only the last four digits of the account.
  y -= 23;
  c.label('Payment', LEFT, y);
  c.label('Amount', RIGHT, y, 'right');
  c.rule(y - 6, 0.75, INK);
  y -= 20;
  const status = returned ? 'returned' : p.status.replace(/_/g, ' ');
  const deposit = `Direct deposit to ${p.account_type} ${MASK}${p.account_number_last4}, routing ${p.routing_number}, trace ${p.trace_number ?? 'not yet assigned'}, status ${status}`;
  c.text(deposit, LEFT, y, { size: 9, minSize: 7.5, maxWidth: RIGHT - LEFT - 70 });
  c.text(money.net, RIGHT, y, { bold: true, align: 'right' });
  if (settles) {
    y -= 13;
    c.text(`Settlement date (effective entry date) ${settles}`, LEFT, y, { size: 8.5, color: MUTED });
  }
  c.rule(y - 6, 0.4, RULE);

  // Footer.
  c.rule(MARGIN + 14, 0.4, RULE);
  c.text(`Earnings statement ${doc.paystub_id} \u00b7 page 1 of 1`, LEFT, MARGIN, {
    size: 7.5,
    minSize: 6,
    color: MUTED,
    maxWidth: 270,
  });
  c.text('Amounts in US dollars. Keep this statement for your records.', RIGHT, MARGIN, {
    size: 7.5,
    color: MUTED,
    align: 'right',
  });

  if (voided) {
    // Over everything, translucent: nothing drawn later (the net pay band) can hide it, every figure stays
    // legible through it, and a mid grey survives black-and-white printing.
    const size = 180;
    const w = advance(fonts.bold, 'VOID', size);
    const angle = (35 * Math.PI) / 180;
    const [cx, cy] = [PAGE_W / 2, PAGE_H / 2 - 20];
    const h = size * 0.36; // half the cap height: the glyphs' optical centre above the baseline
    page.drawText('VOID', {
      x: cx - (w / 2) * Math.cos(angle) + h * Math.sin(angle),
      y: cy - (w / 2) * Math.sin(angle) - h * Math.cos(angle),
      size,
      font: fonts.bold,
      color: grayscale(0.35),
      opacity: 0.22,
      rotate: degrees(35),
    });
  }

  const bytes = await pdf.save();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
