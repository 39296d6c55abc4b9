import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDocument, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaystubDocument, renderPaystubPdf, TABLE_COLUMNS, TEXT_AREA } from '../../shared/adapters/paystub-pdf.js';
import {
  accentedPaystub,
  returnedPaystub,
  samplePaystub,
  sorenPaystub,
  widestPaystub,
} from '../fixtures/paystub-document.js';

/** pdf.js's codes for the steps of a path (its `DrawOPS`, which it does not export). */
const DrawOPS = { moveTo: 0, lineTo: 1, closePath: 4 } as const;

/**
 * The paystub's layout as the PDF itself states it, read with pdf.js: one box per text-showing operation (what one
 * drawing call wrote), from the font's ascent to its descent and as wide as the glyphs' advances, in page space;
 * and one box per stroked path (the rules and borders), as thick as the line.
 */
interface TextBox {
  text: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  /** Where the text starts and its baseline, in page space. */
  x: number;
  baseline: number;
  size: number;
  bold: boolean;
  /** Set at an angle (the VOID mark), so its box is the bounding box of the turned text. */
  turned: boolean;
}
interface RuleBox {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}
interface Page {
  texts: TextBox[];
  rules: RuleBox[];
}

type Matrix = [number, number, number, number, number, number];
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];
const multiply = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[1] * n[2],
  m[0] * n[1] + m[1] * n[3],
  m[2] * n[0] + m[3] * n[2],
  m[2] * n[1] + m[3] * n[3],
  m[4] * n[0] + m[5] * n[2] + n[4],
  m[4] * n[1] + m[5] * n[3] + n[5],
];
const apply = (m: Matrix, x: number, y: number): [number, number] => [
  m[0] * x + m[2] * y + m[4],
  m[1] * x + m[3] * y + m[5],
];

/** The bounding box of the corners of a rectangle after the matrix. */
function boundsOf(m: Matrix, x0: number, y0: number, x1: number, y1: number) {
  const pts = [apply(m, x0, y0), apply(m, x1, y0), apply(m, x0, y1), apply(m, x1, y1)];
  return {
    x0: Math.min(...pts.map((p) => p[0])),
    x1: Math.max(...pts.map((p) => p[0])),
    y0: Math.min(...pts.map((p) => p[1])),
    y1: Math.max(...pts.map((p) => p[1])),
  };
}

const STROKES = new Set<number>([OPS.stroke, OPS.closeStroke, OPS.fillStroke, OPS.closeFillStroke]);

async function readLayout(pdf: Buffer): Promise<Page[]> {
  const doc = await getDocument({ data: new Uint8Array(pdf), verbosity: 0, isEvalSupported: false }).promise;
  const pages: Page[] = [];
  try {
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const { fnArray, argsArray } = await page.getOperatorList();
      const texts: TextBox[] = [];
      const rules: RuleBox[] = [];
      let ctm: Matrix = IDENTITY;
      let lineWidth = 1;
      const stack: [Matrix, number][] = [];
      let textMatrix: Matrix = IDENTITY;
      let font = { ascent: 0.718, descent: -0.207, bold: false };
      let size = 0;
      fnArray.forEach((fn, i) => {
        const args = argsArray[i];
        if (fn === OPS.save) stack.push([ctm, lineWidth]);
        else if (fn === OPS.restore) [ctm, lineWidth] = stack.pop() ?? [IDENTITY, 1];
        else if (fn === OPS.transform) ctm = multiply(args as Matrix, ctm);
        else if (fn === OPS.setLineWidth) lineWidth = args[0];
        else if (fn === OPS.beginText) textMatrix = IDENTITY;
        else if (fn === OPS.setTextMatrix) textMatrix = [...(args[0] as number[])] as Matrix;
        else if (fn === OPS.moveText) textMatrix = multiply([1, 0, 0, 1, args[0], args[1]], textMatrix);
        else if (fn === OPS.setFont) {
          const f = page.commonObjs.get(args[0]) as { ascent: number; descent: number; name: string };
          font = { ascent: f.ascent, descent: f.descent, bold: /bold/i.test(f.name) };
          size = args[1];
        } else if (fn === OPS.showText) {
          const glyphs = args[0] as ({ unicode: string; width: number } | number)[];
          let advance = 0;
          let text = '';
          for (const g of glyphs) {
            if (typeof g === 'number') advance -= g / 1000;
            else {
              advance += g.width / 1000;
              text += g.unicode;
            }
          }
          const m = multiply(multiply([size, 0, 0, size, 0, 0], textMatrix), ctm);
          const [x, baseline] = apply(m, 0, 0);
          texts.push({
            text,
            ...boundsOf(m, 0, font.descent, advance, font.ascent),
            x,
            baseline,
            size: Math.hypot(m[0], m[1]),
            bold: font.bold,
            turned: Math.abs(m[1]) > 1e-6 || Math.abs(m[2]) > 1e-6,
          });
          textMatrix = multiply([1, 0, 0, 1, advance * size, 0], textMatrix);
        } else if (fn === OPS.constructPath && STROKES.has(args[0]) && args[1]?.[0]) {
          // Each straight segment of the path, as thick as the line: a bordered box is its four sides, not its area.
          const path = args[1][0] as Float32Array;
          const half = lineWidth / 2;
          let start: [number, number] = [0, 0];
          let at: [number, number] = [0, 0];
          const segment = (to: [number, number]) => {
            const b = boundsOf(
              ctm,
              Math.min(at[0], to[0]),
              Math.min(at[1], to[1]),
              Math.max(at[0], to[0]),
              Math.max(at[1], to[1]),
            );
            rules.push({ x0: b.x0 - half, x1: b.x1 + half, y0: b.y0 - half, y1: b.y1 + half });
            at = to;
          };
          for (let k = 0; k < path.length; ) {
            const op = path[k++];
            if (op === DrawOPS.moveTo) {
              start = at = [path[k]!, path[k + 1]!];
              k += 2;
            } else if (op === DrawOPS.lineTo) {
              segment([path[k]!, path[k + 1]!]);
              k += 2;
            } else if (op === DrawOPS.closePath) segment(start);
            else throw new Error(`The paystub draws only straight lines, not path operation ${op}`);
          }
        }
      });
      pages.push({ texts, rules });
      page.cleanup();
    }
  } finally {
    await doc.destroy();
  }
  return pages;
}

/** Two boxes sharing area: touching edges (a baseline on a baseline, a tracked label's letters) do not count. */
const EPS = 0.01;
const overlaps = (a: RuleBox, b: RuleBox) =>
  a.x0 < b.x1 - EPS && b.x0 < a.x1 - EPS && a.y0 < b.y1 - EPS && b.y0 < a.y1 - EPS;
const show = (b: TextBox) =>
  `"${b.text}" [${b.x0.toFixed(1)}–${b.x1.toFixed(1)}, ${b.y0.toFixed(1)}–${b.y1.toFixed(1)}]`;

/** Every overlap on a page between two texts, or a text and a rule, as a readable line. */
function collisions(page: Page): string[] {
  const found: string[] = [];
  const texts = page.texts.filter((t) => !t.turned && t.text.trim() !== '');
  texts.forEach((a, i) => {
    for (const b of texts.slice(i + 1)) if (overlaps(a, b)) found.push(`${show(a)} overlaps ${show(b)}`);
    for (const r of page.rules)
      if (overlaps(a, r)) found.push(`${show(a)} crosses the rule at y ${((r.y0 + r.y1) / 2).toFixed(1)}`);
  });
  return found;
}

/** Texts with any part outside the text area (the VOID mark included, turned as it is). */
function outside(page: Page): string[] {
  return page.texts
    .filter((t) => t.x0 < TEXT_AREA.left - EPS || t.x1 > TEXT_AREA.right + EPS)
    .concat(page.texts.filter((t) => t.y0 < TEXT_AREA.bottom - EPS || t.y1 > TEXT_AREA.top + EPS))
    .map(show);
}

/** Letters of a section label (drawn one by one, tracked) joined back into its words, with their baseline. */
function labels(page: Page): { text: string; x: number; baseline: number }[] {
  const out: { text: string; x: number; baseline: number; x1: number }[] = [];
  for (const t of page.texts) {
    if (t.size !== 7 || !t.bold) continue;
    const last = out.at(-1);
    if (last && last.baseline === t.baseline && t.x0 - last.x1 > -EPS && t.x0 - last.x1 < 1) {
      last.text += t.text;
      last.x1 = t.x1;
    } else out.push({ text: t.text, x: t.x0, baseline: t.baseline, x1: t.x1 });
  }
  return out;
}

/**
 * Texts that cross the gutter between the earnings and the deductions tables, from a table heading down to the
 * summary (or the footer's rule, the lowest on the page, when the tables go on to the next page).
 */
function gutterCrossings(page: Page): string[] {
  const [, gutterL] = TABLE_COLUMNS.earnings;
  const [gutterR] = TABLE_COLUMNS.deductions;
  const ls = labels(page);
  const head = ls.find((l) => l.text.startsWith('EARNINGS'));
  if (!head) return [];
  const summary = ls.find((l) => l.text === 'SUMMARY');
  const bottom = summary ? summary.baseline : Math.min(...page.rules.map((r) => r.y1));
  return page.texts
    .filter((t) => !t.turned && t.baseline <= head.baseline && t.baseline > bottom)
    .filter((t) => t.x1 > gutterL + EPS && t.x0 < gutterR - EPS)
    .map(show);
}

/**
 * The lines of a text block that starts with `start`: the next lines are the texts set at the same left edge, size
 * and weight, each one line further down (on the same page), as the renderer sets a wrapped block.
 */
function blockFrom(pages: Page[], start: string): string {
  for (const page of pages) {
    const texts = page.texts.filter((t) => !t.turned);
    const first = texts.find((t) => t.text.startsWith(start));
    if (!first) continue;
    const lines = [first];
    let leading: number | undefined;
    for (;;) {
      const prev = lines.at(-1)!;
      const next = texts
        .filter((t) => Math.abs(t.x - first.x) < EPS && t.size === first.size && t.bold === first.bold)
        .filter((t) => t.baseline < prev.baseline - EPS)
        .sort((a, b) => b.baseline - a.baseline)[0];
      if (!next) break;
      const step = prev.baseline - next.baseline;
      if (step > first.size * 1.6 || (leading !== undefined && Math.abs(step - leading) > EPS)) break;
      leading = step;
      lines.push(next);
    }
    return lines.map((l) => l.text).join(' ');
  }
  return '';
}

/**
 * What the standard fonts print of a name: Latin-1 as it is; Ł, ą, ź (not in their encoding) as the bare letter.
 */
const printed = (name: string) =>
  [...name].map((ch) => (ch <= '\u00ff' ? ch : ch === 'Ł' ? 'L' : ch.normalize('NFD').replace(/\p{M}/gu, ''))).join('');
const squeeze = (text: string) => text.replace(/\s+/g, '');

const fixtures: [string, PaystubDocument][] = [
  ['the sample stub', samplePaystub],
  ['a returned deposit', returnedPaystub],
  ['Søren Ødegård', sorenPaystub],
  ['the widest names, ids and amounts the API accepts', widestPaystub],
  ['long accented names of many words, voided', accentedPaystub],
];

const rendered = new Map<string, Promise<{ pdf: Buffer; pages: Page[] }>>();
const layoutOf = (name: string, doc: PaystubDocument) => {
  let r = rendered.get(name);
  if (!r) {
    r = renderPaystubPdf(doc).then(async (pdf) => ({ pdf, pages: await readLayout(pdf) }));
    rendered.set(name, r);
  }
  return r;
};

describe.each(fixtures)('the paystub of %s', (name, doc) => {
  it('has no two texts overlapping, and no text across a rule', async () => {
    const { pages } = await layoutOf(name, doc);
    for (const [i, page] of pages.entries()) expect(collisions(page), `page ${i + 1}`).toEqual([]);
  });

  it('draws every character inside the text area', async () => {
    const { pages } = await layoutOf(name, doc);
    for (const [i, page] of pages.entries()) expect(outside(page), `page ${i + 1}`).toEqual([]);
  });

  it('keeps the gutter between the earnings and the deductions clear', async () => {
    const { pages } = await layoutOf(name, doc);
    expect(pages.some((p) => labels(p).some((l) => l.text === 'EARNINGS'))).toBe(true);
    for (const [i, page] of pages.entries()) expect(gutterCrossings(page), `page ${i + 1}`).toEqual([]);
  });

  it('prints the names whole, wrapped rather than cut, and never an ellipsis', async () => {
    const { pages } = await layoutOf(name, doc);
    const all = pages.flatMap((p) => p.texts.map((t) => t.text)).join('\n');
    expect(all).not.toContain('\u2026');
    for (const whole of [doc.employee.name, doc.employer.name]) {
      const expected = printed(whole);
      expect(squeeze(blockFrom(pages, expected.slice(0, 8)))).toBe(squeeze(expected));
    }
  });

  it('prints every amount whole, each in one piece', async () => {
    const { pages } = await layoutOf(name, doc);
    const texts = new Set(pages.flatMap((p) => p.texts.map((t) => t.text)));
    const usd = (cents: number) =>
      `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
    const amounts = [doc.gross_pay, doc.bonuses, doc.gross_pay + doc.bonuses, doc.deductions_total, doc.net_pay];
    for (const cents of [...amounts, ...Object.values(doc.deductions)]) expect(texts).toContain(usd(cents));
  });

  it('keeps the names clear of the pay date and of the references, and the deposit clear of its amount', async () => {
    const { pages } = await layoutOf(name, doc);
    const first = pages[0]!;
    const texts = first.texts.filter((t) => !t.turned);
    const at = (text: string) => texts.find((t) => t.text === text)!;
    const gapBetween = (lefts: TextBox[], rights: TextBox[]) =>
      Math.min(...rights.map((t) => t.x0)) - Math.max(...lefts.map((t) => t.x1));

    // The employer's name (bold lines at the left edge, above "Earnings Statement") and the pay date (its label
    // and, in the header, its value: the text of the references' "Pay date").
    const employer = texts.filter(
      (t) => t.bold && t.x0 === TEXT_AREA.left && t.baseline > at('Earnings Statement').baseline,
    );
    const payDateText = texts.find((t) => t.baseline === at('Pay date').baseline && t.x0 > at('Pay date').x1)!.text;
    const payDate = [
      ...first.texts.filter((t) => t.size === 7 && t.baseline > at('Earnings Statement').baseline),
      ...texts.filter((t) => t.text === payDateText && t.size === 12),
    ];
    expect(employer.length).toBeGreaterThan(0);
    expect(payDate.length).toBe('PAY DATE'.length + 1);
    expect(gapBetween(employer, payDate)).toBeGreaterThanOrEqual(12);

    // The employee's name and id (from the EMPLOYEE label down to the id's lines) and the references' keys.
    const label = labels(first).find((l) => l.text === 'EMPLOYEE')!;
    const idLine = texts.find((t) => t.text.startsWith('Employee ID'))!;
    const employee = texts.filter(
      (t) => t.x0 === TEXT_AREA.left && t.baseline < label.baseline && t.baseline >= idLine.baseline - 3 * idLine.size,
    );
    const keys = ['Pay period', 'Pay date', 'Issued', 'Paystub ID', 'Payroll ID'].map(at);
    expect(employee.length).toBeGreaterThan(1);
    expect(gapBetween(employee, keys)).toBeGreaterThanOrEqual(12);

    // The deposit's sentence and the amount beside its first line, however long the status.
    const all = pages.flatMap((p) => p.texts);
    const deposit = all.find((t) => t.text.startsWith('Direct deposit to'))!;
    const amount = all.find((t) => t.bold && t.baseline === deposit.baseline && t.text.startsWith('$'))!;
    expect(amount.text).toBe(`$${(doc.net_pay / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`);
    expect(gapBetween([deposit], [amount])).toBeGreaterThanOrEqual(12);
  });

  it('numbers its pages, and heads a continued page as such', async () => {
    const { pages } = await layoutOf(name, doc);
    pages.forEach((page, i) => {
      const footer = page.texts.map((t) => t.text).join(' ');
      expect(footer).toContain(`page ${i + 1} of ${pages.length}`);
      if (i > 0) expect(squeeze(footer)).toContain(squeeze(`Earnings statement ${doc.paystub_id} (continued)`));
    });
  });
});

describe('the paystub at the limits', () => {
  it('flows onto further pages rather than off the first', async () => {
    const { pages } = await layoutOf('the widest names, ids and amounts the API accepts', widestPaystub);
    expect(pages.length).toBeGreaterThan(1);
    const { pages: sample } = await layoutOf('the sample stub', samplePaystub);
    expect(sample).toHaveLength(1);
  });
});

/**
 * Each page rasterised, to look at: `pdftoppm` (poppler-utils) writes one PNG per page into a temporary directory,
 * kept when PAYSTUB_PNG_DIR names one. Skipped, saying so, where pdftoppm is not installed.
 */
const pdftoppm = (() => {
  try {
    execFileSync('pdftoppm', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
describe('the pages as images', () => {
  const keep = process.env.PAYSTUB_PNG_DIR;
  let dir = '';
  // Made when a test runs (not when the file is collected), so a filtered or skipped run leaves nothing behind.
  beforeAll(() => {
    if (keep) mkdirSync(keep, { recursive: true });
    dir = keep ?? mkdtempSync(join(tmpdir(), 'paystub-png-'));
  });
  afterAll(() => {
    if (dir && !keep) rmSync(dir, { recursive: true, force: true });
  });
  if (!pdftoppm) console.warn('pdftoppm (poppler-utils) is not installed: the paystub pages are not rendered to PNG');
  it.skipIf(!pdftoppm).each(fixtures.map(([name, doc], i) => [i, name, doc] as const))(
    'renders every page of fixture %i (%s) to PNG',
    async (i, name, doc) => {
      const { pdf, pages } = await layoutOf(name, doc);
      const file = join(dir, `paystub-${i}.pdf`);
      writeFileSync(file, pdf);
      execFileSync('pdftoppm', ['-r', '60', '-png', file, join(dir, `paystub-${i}`)]);
      const pngs = readdirSync(dir).filter((f) => f.startsWith(`paystub-${i}-`) && f.endsWith('.png'));
      expect(pngs).toHaveLength(pages.length);
    },
  );
});
