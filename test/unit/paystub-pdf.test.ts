import { extractText, getDocumentProxy } from 'unpdf';
import { describe, expect, it } from 'vitest';
import {
  MASK,
  PaystubPdfError,
  deductionLabel,
  formatUsd,
  renderPaystubPdf,
} from '../../shared/adapters/paystub-pdf.js';
import { achText } from '../../shared/domain/ach-text.js';
import { paystubFileName } from '../../shared/domain/paystub-file.js';
import { returnedPaystub, samplePaystub, widestPaystub } from '../fixtures/paystub-document.js';

const sample = samplePaystub;

/** The text as an independent reader (pdf.js, through unpdf) sees it, one line per row of the page. */
async function read(pdf: Buffer) {
  const doc = await getDocumentProxy(new Uint8Array(pdf));
  const { text } = await extractText(doc, { mergePages: true });
  const page = await doc.getPage(1);
  return { text, lines: text.split('\n'), pages: doc.numPages, box: page.view };
}

describe('renderPaystubPdf', () => {
  it('writes a one-page Letter PDF', async () => {
    const pdf = await renderPaystubPdf(sample);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const { pages, box } = await read(pdf);
    expect(pages).toBe(1);
    expect(box).toEqual([0, 0, 612, 792]);
  });

  it('shows the header, the employee and the statement references', async () => {
    const { text, lines } = await read(await renderPaystubPdf(sample));
    expect(text).toContain('Northwind Robotics, Inc.');
    expect(text).toContain('Earnings Statement');
    expect(lines).toContain('Jane Q. Doe');
    expect(lines).toContain('Employee ID emp_01jpz4r8kd3vxq7m2h9cwt6naf');
    expect(lines).toContain('Pay period Mar 16 \u2013 Mar 29, 2026');
    expect(lines).toContain('Pay date Apr 3, 2026');
    expect(lines).toContain('Paystub ID stub_4ft7k2qw9xm3nbd8vpz6hr1cey');
  });

  it('shows earnings, each deduction on its own line with its amount, and the totals', async () => {
    const { lines } = await read(await renderPaystubPdf(sample));
    expect(lines).toContain('Regular pay 80.00 $3,200.00');
    expect(lines).toContain('Bonuses $250.00');
    expect(lines).toContain('Taxes $612.40');
    expect(lines).toContain('Benefits $148.10');
    expect(lines).toContain('Retirement $100.00');
    expect(lines).toContain('Health Savings Account $0.00');
    expect(lines).toContain('Gross earnings 80.00 $3,450.00 Total deductions $860.50');
  });

  it('shows net pay prominently and the year to date', async () => {
    const { lines } = await read(await renderPaystubPdf(sample));
    expect(lines).toContain('NET PAY');
    expect(lines).toContain('Gross earnings $3,450.00, less deductions $860.50 $2,589.50');
    expect(lines).toContain('Gross earnings $3,450.00 $20,950.00');
    expect(lines).toContain('Net pay $2,589.50 $15,716.45');
  });

  it('shows a dash for the year to date when there is none', async () => {
    const { lines } = await read(await renderPaystubPdf({ ...sample, year_to_date: null }));
    expect(lines).toContain('Gross earnings $3,450.00 \u2014');
    expect(lines).toContain('Net pay $2,589.50 \u2014');
  });

  it('shows the deposit with a masked account, and no other account-like number', async () => {
    const { text, lines } = await read(await renderPaystubPdf(sample));
    expect(MASK).toBe('\u2022\u2022\u2022\u2022');
    expect(lines).toContain(
      'Direct deposit to checking \u2022\u2022\u2022\u20226789, routing 021000021, trace 021000020000001, status scheduled $2,589.50',
    );
    // Every run of five or more digits on the page is the routing or the trace number.
    const runs = new Set(text.match(/\d{5,}/g));
    expect(runs).toEqual(new Set(['021000021', '021000020000001']));
  });

  it('says when the trace number is not yet known and spells the payment status out', async () => {
    const { text } = await read(
      await renderPaystubPdf({
        ...sample,
        payment: { ...sample.payment, account_type: 'savings', trace_number: null, status: 'no_payment' },
      }),
    );
    expect(text).toContain(
      'Direct deposit to savings \u2022\u2022\u2022\u20226789, routing 021000021, trace not yet assigned, status no payment',
    );
  });

  it('prints the settlement date (effective entry date) when there is one', async () => {
    const { lines } = await read(await renderPaystubPdf(sample));
    expect(lines).toContain('Settlement date (effective entry date) Apr 3, 2026');
    for (const effective_entry_date of [null, undefined]) {
      const { text } = await read(
        await renderPaystubPdf({
          ...sample,
          payment: { ...sample.payment, trace_number: null, status: 'no_payment', effective_entry_date },
        }),
      );
      expect(text).not.toContain('Settlement date');
    }
  });

  it('says plainly that a returned deposit was returned, with its code, reason and day, and keeps the wages', async () => {
    const { text, lines, pages } = await read(await renderPaystubPdf(returnedPaystub));
    expect(pages).toBe(1);
    const flat = text.replace(/\s+/g, ' ');
    expect(lines).toContain('DEPOSIT RETURNED');
    expect(flat).toContain(
      'Deposit returned by the bank: R03 No account / unable to locate account, on Apr 6, 2026. The wages remain earned; this statement is not a record of payment.',
    );
    expect(lines).toContain(
      'Direct deposit to checking \u2022\u2022\u2022\u20226789, routing 021000021, trace 021000020000001, status returned $2,589.50',
    );
    expect(lines).toContain('Settlement date (effective entry date) Apr 3, 2026');
    // Still an issued statement of earned wages: the figures stand, and it is not voided.
    expect(lines).toContain('Net pay $2,589.50 $15,716.45');
    expect(text).not.toMatch(/VOID/);
    const scheduled = await read(await renderPaystubPdf(sample));
    expect(scheduled.text).not.toMatch(/returned/i);
  });

  it('shows the return as returned even if only the return details are given', async () => {
    const { text } = await read(
      await renderPaystubPdf({ ...returnedPaystub, payment: { ...returnedPaystub.payment, status: 'scheduled' } }),
    );
    expect(text).toContain('status returned');
    expect(text.replace(/\s+/g, ' ')).toContain('Deposit returned by the bank: R03');
  });

  it('wraps a long return reason inside the page, and dates the return by its UTC day', async () => {
    const reason =
      'File record edit criteria / entry with invalid account number initiated under questionable circumstances';
    const { text, pages } = await read(
      await renderPaystubPdf({
        ...returnedPaystub,
        status: 'voided',
        payment: {
          ...returnedPaystub.payment,
          return: { code: 'R17', reason, returned_at: '2026-04-06T21:30:00-05:00' },
        },
      }),
    );
    expect(pages).toBe(1);
    expect(text.replace(/\s+/g, ' ')).toContain(`R17 ${reason}, on Apr 7, 2026. The wages remain earned`);
    expect(text).toContain('This paystub has been voided.');
  });

  it('refuses a malformed return code, reason or time, and a malformed settlement date', async () => {
    const ret = returnedPaystub.payment.return!;
    const bad = [
      { ...ret, code: 'R3' },
      { ...ret, code: 'R003' },
      { ...ret, code: 'C03' },
      { ...ret, code: 'r03' },
      { ...ret, reason: '' },
      { ...ret, reason: '   ' },
      { ...ret, reason: 'No account\u0007' },
      { ...ret, reason: 'No account\n/ unable' },
      { ...ret, reason: '\u202eNo account' },
      { ...ret, reason: 'x'.repeat(201) },
      { ...ret, returned_at: 'yesterday' },
      { ...ret, returned_at: '2026-04-06' },
      { ...ret, returned_at: '2026-04-06T14:05:09' },
      { ...ret, returned_at: '2026-02-30T14:05:09Z' },
    ];
    for (const r of bad)
      await expect(
        renderPaystubPdf({ ...returnedPaystub, payment: { ...returnedPaystub.payment, return: r } }),
        JSON.stringify(r),
      ).rejects.toBeInstanceOf(PaystubPdfError);
    for (const effective_entry_date of ['2026-04-31', 'Apr 3, 2026', ''])
      await expect(
        renderPaystubPdf({ ...sample, payment: { ...sample.payment, effective_entry_date } }),
      ).rejects.toBeInstanceOf(PaystubPdfError);
  });

  it('refuses anything but four digits as the account, without echoing it', async () => {
    for (const last4 of ['123456789', '12345', '678', 'abcd']) {
      const error = await renderPaystubPdf({
        ...sample,
        payment: { ...sample.payment, account_number_last4: last4 },
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PaystubPdfError);
      expect((error as Error).message).not.toContain(last4);
    }
  });

  it('marks a voided paystub VOID, and only a voided one', async () => {
    const voided = await read(await renderPaystubPdf({ ...sample, status: 'voided' }));
    expect(voided.text).toMatch(/\bVOID\b/);
    expect(voided.text).toContain('This paystub has been voided. It is not a record of payment.');
    expect(voided.text).toContain('$2,589.50');
    const issued = await read(await renderPaystubPdf(sample));
    expect(issued.text).not.toMatch(/VOID/);
  });

  it('renders names the standard fonts cannot encode instead of failing', async () => {
    const { lines } = await read(
      await renderPaystubPdf({
        ...sample,
        employee: { ...sample.employee, name: 'Zo\u00eb \u0141ukasz \u015awi\u0105tek \u5c71\u7530' },
      }),
    );
    expect(lines).toContain('Zo\u00eb Lukasz Swiatek ??');
  });

  it('is deterministic: the same stub gives the same bytes', async () => {
    const [a, b] = await Promise.all([renderPaystubPdf(sample), renderPaystubPdf(structuredClone(sample))]);
    expect(a.equals(b)).toBe(true);
  });

  it('refuses malformed dates and amounts that are not whole cents', async () => {
    await expect(renderPaystubPdf({ ...sample, pay_date: '2026-02-30' })).rejects.toBeInstanceOf(PaystubPdfError);
    await expect(renderPaystubPdf({ ...sample, net_pay: 2589.5 })).rejects.toBeInstanceOf(PaystubPdfError);
  });
});

describe('formatUsd', () => {
  it.each([
    [0, '$0.00'],
    [5, '$0.05'],
    [99, '$0.99'],
    [100, '$1.00'],
    [123_456, '$1,234.56'],
    [100_000_000, '$1,000,000.00'],
    [123_456_789, '$1,234,567.89'],
    [-258_950, '-$2,589.50'],
    [Number.MAX_SAFE_INTEGER, '$90,071,992,547,409.91'],
  ])('%i cents is %s', (cents, text) => {
    expect(formatUsd(cents)).toBe(text);
  });

  it('refuses a fraction of a cent', () => {
    expect(() => formatUsd(0.5)).toThrow(PaystubPdfError);
  });
});

describe('deductionLabel', () => {
  it.each([
    ['taxes', 'Taxes'],
    ['retirement', 'Retirement'],
    ['garnishments', 'Garnishments'],
    ['health_savings_account', 'Health Savings Account'],
    ['total', 'Unitemized deductions'],
  ])('%s is %s', (name, label) => {
    expect(deductionLabel(name)).toBe(label);
  });
});

describe('paystubFileName', () => {
  const paystub_id = samplePaystub.paystub_id;

  it('is paystub-<paystub_id>.pdf without a name, as the API names the PDF', () => {
    expect(paystubFileName({ paystub_id })).toBe('paystub-stub_4ft7k2qw9xm3nbd8vpz6hr1cey.pdf');
    expect(paystubFileName({ paystub_id, employee_name: null })).toBe(`paystub-${paystub_id}.pdf`);
  });

  it.each([
    ['S\u00f8ren \u00d8deg\u00e5rd', 'paystub-soren-odegard.pdf'],
    ['Zo\u00eb \u0141ukasz', 'paystub-zoe-lukasz.pdf'],
    ["Se\u00e1n O'Brien-M\u00fcller", 'paystub-sean-obrien-muller.pdf'],
    ['  Jane   Q. Doe ', 'paystub-jane-q-doe.pdf'],
    ['\uff2a\uff41\uff4e\uff45 \ufb01sher', 'paystub-jane-fisher.pdf'],
  ])('names the PDF of %s %s, spelt as the bank file spells it', (employee_name, file) => {
    expect(paystubFileName({ paystub_id, employee_name })).toBe(file);
    // The same letters as the name in the NACHA file, only lowercase and joined by hyphens.
    const bank = achText(employee_name.replace(/'/g, '')).toLowerCase();
    expect(file.slice('paystub-'.length, -'.pdf'.length)).toBe(
      bank
        .split(/[^a-z0-9]+/)
        .filter(Boolean)
        .join('-'),
    );
  });

  it('falls back to the id when nothing of the name has a Latin spelling', () => {
    expect(paystubFileName({ paystub_id, employee_name: '\u5c71\u7530 \u592a\u90ce' })).toBe(
      `paystub-${paystub_id}.pdf`,
    );
    expect(paystubFileName({ paystub_id, employee_name: '' })).toBe(`paystub-${paystub_id}.pdf`);
  });

  it('keeps the longest names short, cut between words, and only ever safe characters', () => {
    const long = paystubFileName({ paystub_id, employee_name: `${'Wolfgang '.repeat(11)}${'M'.repeat(100)}` });
    expect(long).toBe(`paystub-${Array(6).fill('wolfgang').join('-')}.pdf`);
    const word = paystubFileName({ paystub_id, employee_name: widestPaystub.employee.name });
    expect(word).toBe(`paystub-${'w'.repeat(60)}.pdf`);
    for (const name of [long, word, paystubFileName({ paystub_id: 'stub_"; x=1', employee_name: null })])
      expect(name).toMatch(/^paystub-[a-z0-9_-]+\.pdf$/);
  });
});
