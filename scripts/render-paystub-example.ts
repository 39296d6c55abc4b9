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
import { renderPaystubPdf } from '../shared/adapters/paystub-pdf.js';
import { samplePaystub } from '../test/fixtures/paystub-document.js';

const DOCS = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs');

const sample = samplePaystub;

const pdfPath = join(DOCS, 'paystub-example.pdf');
writeFileSync(pdfPath, await renderPaystubPdf(sample));
// -singlefile writes <root>.png rather than <root>-1.png.
execFileSync('pdftoppm', ['-png', '-r', '110', '-singlefile', pdfPath, join(DOCS, 'paystub-example')]);
console.log(`wrote ${pdfPath} and ${join(DOCS, 'paystub-example.png')}`);
