import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  hasChromium,
  hire,
  LAPTOP,
  launchChromium,
  nav,
  newPage,
  overflowing,
  PHONE,
  seriousAxeViolations,
  shoot,
  signIn,
} from './support.js';
import { type RunningStack, startLocalStack } from '../support/local-stack.js';

/**
 * The payroll runs as an operator handles them in the dashboard (issue 22, points 1, 4, 6 and 7): the bank file of a
 * completed run and plainly none for the others, failures that name people and never call unpaid money credited,
 * the list with each run's outcome, and a run submitted from a CSV through a dry run, then cancelled (sandbox).
 */
let stack: RunningStack;
let browser: Browser;
let page: Page;
let token: string;
let base: string;
const ids: Record<string, string> = {};
const runs: Record<'paid' | 'failed' | 'rejected', string> = { paid: '', failed: '', rejected: '' };

const PEOPLE = [
  ['Zoë', 'Zimmermann'],
  ['Ada', 'Lovelace'],
  ['Mallory', 'Returned'],
  ['Grace', 'Hopper'],
] as const;

const money = (n: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(n);

async function submit(body: Record<string, unknown>): Promise<string> {
  const res = await stack.request('POST', '/v1/payroll', { token, body });
  expect(res.status, res.text).toBe(202);
  return res.body.data.payroll_id as string;
}

async function settled(payrollId: string, status: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const res = await stack.request('GET', `/v1/payroll/${payrollId}`, { token });
      expect(res.body.data.status).toBe(status);
    },
    { timeout: 30_000, interval: 200 },
  );
}

const entry = (id: string, gross: number, notes?: string) => ({
  employee_id: id,
  gross_pay: gross.toFixed(2),
  hours_worked: 80,
  deductions: { taxes: (gross * 0.2).toFixed(2) },
  ...(notes ? { notes } : {}),
});

describe.skipIf(!hasChromium)('payroll runs in the dashboard', () => {
  beforeAll(async () => {
    stack = await startLocalStack();
    base = `https://localhost:${stack.state.https_port}`;
    ({ token } = await stack.createOrganization('Fjord Logistics'));
    for (const [i, [first, last]] of PEOPLE.entries()) ids[first] = await hire(stack, token, i, first, last);
    // Mallory's account is the sandbox's returned one: the run completes and her deposit comes back R03.
    const patched = await stack.request('PATCH', `/v1/employees/${ids.Mallory}`, {
      token,
      body: { bank_account: { account_number: '000000000', routing_number: '021000021', account_type: 'checking' } },
    });
    expect(patched.status, patched.text).toBe(200);

    const all = PEOPLE.map(([first], i) => entry(ids[first]!, 2000 + 250 * i));
    runs.paid = await submit({
      pay_period_start: '2026-10-01',
      pay_period_end: '2026-10-14',
      pay_date: '2026-10-16',
      employees: all,
    });
    runs.failed = await submit({
      type: 'off_cycle',
      pay_period_start: '2026-10-01',
      pay_period_end: '2026-10-14',
      pay_date: '2026-10-23',
      employees: [entry(ids.Ada!, 500, 'simulate:fail'), entry(ids.Grace!, 700)],
    });
    runs.rejected = await submit({
      type: 'off_cycle',
      pay_period_start: '2026-10-01',
      pay_period_end: '2026-10-14',
      pay_date: '2026-10-30',
      employees: [entry(ids.Zoë!, 600, 'simulate:reject')],
    });
    await settled(runs.paid, 'completed');
    await settled(runs.failed, 'failed');
    await settled(runs.rejected, 'rejected');
    // The sandbox's returned deposit arrives as the bank would send it: wait until the run counts it.
    await vi.waitFor(
      async () => {
        const res = await stack.request('GET', `/v1/payroll/${runs.paid}`, { token });
        expect(res.body.data.returns.count).toBe(1);
      },
      { timeout: 30_000, interval: 200 },
    );
    browser = await launchChromium();
    ({ page } = await newPage(browser, base, LAPTOP));
    await signIn(page, base, token);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('lists runs with what became of each: the failure reason, net pay "not paid" unless it reached a file', async () => {
    await nav(page, 'Payrolls').click();
    const row = (id: string) => page.locator(`tr[data-payroll-id="${id}"]`);
    await row(runs.rejected).getByTestId('run-reason').waitFor();
    await row(runs.failed).getByTestId('run-reason').waitFor();
    expect(await row(runs.failed).getByTestId('run-reason').textContent()).toContain('Processing failed');
    expect(await row(runs.rejected).getByTestId('run-reason').textContent()).toMatch(/\S/);

    expect(await row(runs.paid).getByTestId('net-pay').textContent()).toContain('in the bank file');
    for (const id of [runs.failed, runs.rejected]) {
      const net = row(id).getByTestId('net-pay');
      expect(await net.textContent()).toContain('not paid');
      // The amount itself is struck through: never shown as money paid.
      expect(await net.locator('s').count()).toBe(1);
    }
    // The page says which order it shows, and it is that order: newest submitted first.
    expect(await page.getByText(/newest submitted first/).count()).toBe(1);
    const order = await page
      .getByTestId('payroll-table')
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-payroll-id')));
    expect(order).toEqual([runs.rejected, runs.failed, runs.paid]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'payrolls-outcomes');
  });

  it('gives a completed run its bank file: control totals, and the file itself as downloaded', async () => {
    await page.goto(`${base}/dashboard/#/payrolls/${runs.paid}`);
    const file = page.getByTestId('disbursement');
    await file.getByTestId('file-summary').waitFor();
    const totals = (
      await stack.request('GET', `/v1/payroll/${runs.paid}/disbursement`, {
        token,
        headers: { accept: 'application/json' },
      })
    ).body.data as { entry_count: number; total_credit: number; entry_hash: string };
    expect(await file.getByTestId('file-summary').textContent()).toContain(
      `${totals.entry_count} entries, ${money(totals.total_credit)} to credit to employees`,
    );
    expect(await file.getByTestId('file-totals').textContent()).toContain(totals.entry_hash);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      file.getByRole('button', { name: /^Download the NACHA file/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${runs.paid}.ach`);
    const text = readFileSync(await download.path(), 'utf8');
    const served = await stack.request('GET', `/v1/payroll/${runs.paid}/disbursement`, { token });
    expect(text).toBe(served.text);
    expect(text.split('\n').filter((l) => l.startsWith('6'))).toHaveLength(totals.entry_count);
    await page.getByText(`Saved as ${runs.paid}.ach.`).waitFor();
  });

  it('names the person whose deposit came back and sorts the paystubs by name', async () => {
    await page.goto(`${base}/dashboard/#/payrolls/${runs.paid}`);
    await page.getByTestId('returns-table').waitFor();
    await page.getByTestId('paystub-table').waitFor();
    expect(await page.getByTestId('returns-table').textContent()).toContain('Mallory Returned');
    const names = await page
      .getByTestId('paystub-table')
      .locator('tbody tr td[data-label="Employee"] strong')
      .allTextContents();
    expect(names).toEqual(['Ada Lovelace', 'Grace Hopper', 'Mallory Returned', 'Zoë Zimmermann']);
    // The bank's return, as an event, names her too.
    const returned = await stack.request('GET', '/v1/events?type=payment.returned', { token });
    const eventId = returned.body.data.events[0].id as string;
    await page.goto(`${base}/dashboard/#/events/${eventId}`);
    await page.getByTestId('event-employee').getByText('Mallory Returned').waitFor();
    await page.goto(`${base}/dashboard/#/payrolls/${runs.paid}`);
    await page.getByTestId('paystub-table').waitFor();

    // The bar of a completed run is green, said in words too.
    expect(await page.locator('.progress').first().getAttribute('data-tone')).toBe('ok');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'payroll-completed');
  });

  it('never calls money credited that was not: a failed run’s bar, file and paystubs say it was not paid', async () => {
    await page.goto(`${base}/dashboard/#/payrolls/${runs.failed}`);
    await page.getByTestId('failure-reason').waitFor();
    const progress = page.locator('.progress').first();
    expect(await progress.getAttribute('data-tone')).toBe('bad');
    expect(await progress.textContent()).toContain('nothing paid');
    const file = page.getByTestId('disbursement');
    expect(await file.getAttribute('data-file')).toBe('none');
    expect(await file.textContent()).toContain('NACHA file withdrawn');
    expect(await file.textContent()).toContain('Nothing was credited');
    await page.getByTestId('paystub-table').waitFor();
    const body = (await page.locator('main').textContent()) ?? '';
    expect(body).not.toMatch(/\bcredited\b(?! to employees)(?<!Nothing was credited)(?<!none of it was credited)/);
    expect(body).not.toContain('returned');
    const statuses = await page.getByTestId('paystub-table').locator('td[data-label="Status"]').allTextContents();
    expect(statuses.every((s) => s.includes('voided'))).toBe(true);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'payroll-failed');

    await page.goto(`${base}/dashboard/#/payrolls/${runs.rejected}`);
    await page.getByTestId('disbursement').waitFor();
    expect(await page.locator('.progress').first().getAttribute('data-tone')).toBe('bad');
    expect(await page.getByTestId('disbursement').textContent()).toContain('No NACHA file');
    expect(await page.getByTestId('paystub-table').count()).toBe(0);
    // The finding names the person it is about.
    await page.getByText('Zoë Zimmermann').first().waitFor();

    // An address that is not valid percent-encoding is a page not found, not a blank screen.
    await page.goto(`${base}/dashboard/#/employees/%E0`);
    await page.getByTestId('not-found').waitFor();
  });

  it('submits a run from a CSV: every problem by line and column, the dry run’s totals, then one run', async () => {
    await nav(page, 'Payrolls').click();
    await page.getByRole('link', { name: 'Submit a run from a CSV' }).click();
    await page.getByRole('heading', { level: 1, name: 'Submit a payroll run' }).waitFor();
    await page.getByLabel('Pay period start').fill('2026-10-15');
    await page.getByLabel('Pay period end').fill('2026-10-28');
    await page.getByLabel('Pay date').fill('2026-10-30');
    const upload = (text: string) =>
      page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'october.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });

    // Line 3 pays nobody the organization employs; line 4 has a negative deduction.
    await upload(
      [
        'Employee ID,Hours,Gross,Bonus,Taxes,Health Plan',
        `${ids.Ada},80,3200.00,150,640.00,120`,
        'emp_01kfz8d4w6t2m9q3r5v7x8y0ab,80,1000.00,,200,',
        `${ids.Grace},72.5,2900.00,,-5,`,
      ].join('\n'),
    );
    await page.getByTestId('csv-summary').waitFor();
    expect(await page.getByTestId('csv-summary').textContent()).toContain('3 rows, deductions: taxes, health_plan');
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    const problems = page.getByTestId('csv-problems');
    await problems.waitFor();
    const byLine = await problems
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-line'), tr.textContent ?? '']));
    // Every problem at once, each on its line (and column): the employee nobody employs, the negative deduction.
    expect(byLine).toEqual([
      ['3', expect.stringContaining('employee_not_found')],
      ['4', expect.stringContaining('taxes')],
    ]);

    // Once the deduction is fixed, only the unknown employee is left, still on line 3.
    await upload(
      [
        'Employee ID,Hours,Gross,Bonus,Taxes,Health Plan',
        `${ids.Ada},80,3200.00,150,640.00,120`,
        'emp_01kfz8d4w6t2m9q3r5v7x8y0ab,80,1000.00,,200,',
        `${ids.Grace},72.5,2900.00,,5,`,
      ].join('\n'),
    );
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    await page.locator('[data-testid="csv-problems"] tbody tr[data-line="3"]').waitFor();
    expect(await problems.locator('tbody tr').count()).toBe(1);

    // A file the page cannot read faithfully is refused before the API is asked: an unquoted thousands separator
    // makes a row wider than the header (its values would shift a column), and a column of pay named as it is in the
    // API would be subtracted as a deduction.
    await upload(
      [
        'Employee ID,Hours,Gross,Bonuses,Taxes',
        `${ids.Ada},80,3,200.00,150,640.00`,
        `${ids.Grace},72.5,2900.00,,580.00`,
      ].join('\n'),
    );
    const fileProblems = page.getByTestId('csv-file-problems');
    await fileProblems.waitFor();
    expect(await fileProblems.textContent()).toContain('Line 2: The row has 6 cells but the header has 5');
    expect(await fileProblems.textContent()).toContain('"bonuses" would be read as a deduction');
    expect(await page.getByRole('button', { name: 'Check (dry run)' }).isDisabled()).toBe(true);

    // Lines are the file's: a quoted note over two lines puts the next row on line 4, and a problem there says so.
    await upload(
      [
        'Employee ID,Hours,Gross,Notes',
        `${ids.Ada},80,3200.00,"on call,`,
        `two weekends"`,
        `${ids.Grace},80,1,2,3`,
      ].join('\n'),
    );
    await fileProblems.getByText('Line 4: The row has 5 cells but the header has 4').waitFor();
    expect(await fileProblems.locator('li').count()).toBe(1);
    // The same with an old Mac's line ends (carriage returns alone) after a byte-order mark.
    await upload(`\uFEFFEmployee ID,Hours,Gross\r${ids.Ada},80,3200.00\r${ids.Grace},80,1,2\r`);
    await fileProblems.getByText('Line 3: The row has 4 cells but the header has 3').waitFor();

    await upload(
      [
        'Employee ID,Hours,Gross,Bonus,Taxes,Health Plan',
        `${ids.Ada},80,3200.00,150,640.00,120`,
        `${ids.Grace},72.5,2900.00,,580.00,`,
      ].join('\n'),
    );
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    await page.getByRole('heading', { name: /Dry run: the run is valid/ }).waitFor();
    // Net: 3200 + 150 − 640 − 120 + 2900 − 580 = 4910.
    const submitButton = page.getByRole('button', { name: `Submit the run (${money(4910)})` });
    await submitButton.waitFor();

    const keys: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/v1/payroll')) keys.push(r.headers()['idempotency-key'] ?? '');
    });
    // Two clicks in one task, before the page can re-render and disable the button (as a double click on a slow
    // machine does): the page's in-flight guard, not the disabled button, makes them one request with the upload's key.
    await submitButton.evaluate((button: HTMLButtonElement) => {
      button.click();
      button.click();
    });
    await page.getByTestId('submitted').waitFor();
    // The button is gone: focus is on what replaced it.
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'submitted');
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^dashboard-[0-9a-f-]{36}$/);
    const list = await stack.request('GET', '/v1/payroll?from=2026-10-30&to=2026-10-30', { token });
    expect(list.body.data.payrolls.filter((p: { type: string }) => p.type === 'regular')).toHaveLength(1);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'submit-payroll');

    await page.getByRole('button', { name: 'Open the run' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payroll run' }).waitFor();
  });

  it('cancels a sandbox run from its page after a confirmation, and then calls its file withdrawn', async () => {
    const id = decodeURIComponent(page.url().split('/').pop()!);
    await settled(id, 'completed');
    await page.reload();
    // By keyboard: the question takes focus from the button it replaces, and gives it back when declined.
    await page.getByRole('button', { name: 'Cancel this run…' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alertdialog').waitFor();
    await page.waitForFunction(() => document.activeElement?.textContent === 'Yes, cancel the run');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.textContent === 'Cancel this run…');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.textContent === 'Yes, cancel the run');
    await page.keyboard.press('Enter');
    await page.getByTestId('run-status').getByText('This run is cancelled.').waitFor();
    expect(await page.getByTestId('disbursement').textContent()).toContain('NACHA file withdrawn');
    expect((await stack.request('GET', `/v1/payroll/${id}`, { token })).body.data.status).toBe('cancelled');
  });

  it('fits a phone: the list, a run, its file and the CSV form without sideways scrolling or serious axe findings', async () => {
    const phone = await newPage(browser, base, PHONE, 2);
    try {
      await signIn(phone.page, base, token);
      for (const [path, ready] of [
        ['#/payrolls', 'payroll-table'],
        [`#/payrolls/${runs.paid}`, 'file-summary'],
        [`#/payrolls/${runs.failed}`, 'failure-reason'],
        ['#/payrolls/new', 'csv-format-title'],
      ] as const) {
        await phone.page.goto(`${base}/dashboard/${path}`);
        await phone.page.locator(`[data-testid="${ready}"], #${ready}`).first().waitFor();
        expect(await overflowing(phone.page), `${path} scrolls sideways`).toEqual([]);
        expect(await seriousAxeViolations(phone.page), path).toEqual([]);
      }
      await phone.page.goto(`${base}/dashboard/#/payrolls/${runs.paid}`);
      await phone.page.getByTestId('file-summary').waitFor();
      await shoot(phone.page, 'phone-payroll-file');
    } finally {
      await phone.context.close();
    }
  });
});
