/**
 * Refreshes docs/paystub-example.pdf and docs/paystub-example.png, the picture of a rendered paystub that the
 * docs show. Run by hand after changing the layout (`npx tsx scripts/render-paystub-example.ts`); tests never run
 * it, because it needs poppler-utils' `pdftoppm` (`apt-get install -y poppler-utils`), which CI does not have.
 * Install `fonts-urw-base35` too: the PDF names Helvetica without embedding it, and poppler otherwise draws it with
 * DejaVu Sans, which is wider than the Helvetica metrics the layout was measured with; Nimbus Sans matches them.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderPaystubPdf, type PaystubDocument } from '../shared/adapters/paystub-pdf.js';

const DOCS = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs');

// A realistic biweekly stub: 80 h at $40.00, a $250.00 bonus, net $2,589.50.
const sample: PaystubDocument = {
  employer: { name: 'Northwind Robotics, Inc.' },
  employee: { name: 'Jane Q. Doe', employee_id: 'emp_01jpz4r8kd3vxq7m2h9cwt6naf' },
  paystub_id: 'stub_4ft7k2qw9xm3nbd8vpz6hr1cey',
  payroll_id: 'pay_01jqa7w3xe5n8t2kfm4bz9rdhv',
  period_start: '2026-03-16',
  period_end: '2026-03-29',
  pay_date: '2026-04-03',
  issued_date: '2026-04-01',
  status: 'issued',
  hours_worked_hundredths: 8000,
  gross_pay: 320_000,
  bonuses: 25_000,
  deductions: { retirement: 10_000, taxes: 61_240, benefits: 14_810, health_savings_account: 0 },
  deductions_total: 86_050,
  net_pay: 258_950,
  year_to_date: { gross_pay: 2_095_000, net_pay: 1_571_645 },
  payment: {
    method: 'direct_deposit',
    account_type: 'checking',
    account_number_last4: '6789',
    routing_number: '021000021',
    trace_number: '021000020000001',
    status: 'scheduled',
  },
};

const pdfPath = join(DOCS, 'paystub-example.pdf');
writeFileSync(pdfPath, await renderPaystubPdf(sample));
// -singlefile writes <root>.png rather than <root>-1.png.
execFileSync('pdftoppm', ['-png', '-r', '110', '-singlefile', pdfPath, join(DOCS, 'paystub-example')]);
console.log(`wrote ${pdfPath} and ${join(DOCS, 'paystub-example.png')}`);
