import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningStack, startLocalStack } from '../support/local-stack.js';
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

/**
 * Money back in the console (CONTRACT §12): the Files page (every file the service wrote, filtered in the address,
 * each downloaded as `<file_id>.ach`, a token without `read:disbursements` told why it may not), reversing a payment
 * from the run's paystub list (its window's last day, a reason, a confirmation, an `Idempotency-Key`, the reversal
 * file), and a run's funding debit returned by the bank: the hold explained, a re-debit from the console, a re-debit
 * the API refuses with its reason in plain words, and a payment by wire recorded.
 */
let stack: RunningStack;
let browser: Browser;
let base: string;
let token: string;
let readOnly: string;
let runId = '';
let fileId = '';
const ids: Record<string, string> = {};

const PEOPLE = [
  ['Ada', 'Lovelace'],
  ['Grace', 'Hopper'],
  ['Katherine', 'Johnson'],
] as const;
const FUNDING_ACCOUNT = '4400123456789';
const DAY = 86_400_000;
const daysAhead = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 10);
const money = (n: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(n);
const day = (d: string) =>
  new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${d}T00:00:00Z`));

const getRun = async () => (await stack.request('GET', `/v1/payroll/${runId}`, { token })).body.data;

async function stubOf(employeeId: string) {
  const res = await stack.request('GET', `/v1/paystubs?payroll_id=${runId}&employee_id=${employeeId}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data.paystubs[0];
}

/** What the bank reported, in the JSON form of `POST /v1/disbursement-returns`; each outcome as the API answers it. */
async function bankReturn(trace: string, code: string): Promise<string> {
  const res = await stack.request('POST', '/v1/disbursement-returns', {
    token,
    body: { returns: [{ trace_number: trace, code }], corrections: [] },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data.outcomes[0].outcome;
}

/** The run's page, read afresh: going to the address it is already at would change nothing. */
async function openRun(p: Page): Promise<void> {
  const target = `${base}/dashboard/#/payrolls/${runId}`;
  if (p.url() === target) await p.reload();
  else await p.goto(target);
  await p.getByRole('heading', { level: 1, name: 'Payroll run' }).waitFor();
  await p.getByTestId('run-status').waitFor();
}

/** The page has drawn everything it loads: no "Loading…" left in it. */
async function settled(p: Page): Promise<void> {
  await p.waitForFunction(() => !/Loading/.test(document.querySelector('main')?.textContent ?? ''), undefined, {
    timeout: 15_000,
  });
}

describe.skipIf(!hasChromium)('money back in the dashboard', () => {
  let admin: { context: BrowserContext; page: Page };

  beforeAll(async () => {
    stack = await startLocalStack();
    base = `https://localhost:${stack.state.https_port}`;
    // Not linked to the sandbox bank: its files stay `ready to send`, as an organization delivering by hand sees them.
    const created = await stack.admin('org', 'create', '--name', 'Keel Logistics', '--without-bank-link', '--json');
    ({ token } = JSON.parse(created.stdout) as { token: string });
    const funding = await stack.request('PATCH', '/v1/settings', {
      token,
      body: {
        funding_account: { routing_number: '021000021', account_number: FUNDING_ACCOUNT, account_type: 'checking' },
      },
    });
    expect(funding.status, funding.text).toBe(200);
    const key = await stack.request('POST', '/v1/api-keys', { token, body: { name: 'Auditor', type: 'read-only' } });
    expect(key.status, key.text).toBe(201);
    readOnly = key.body.data.token;
    for (const [i, [first, last]] of PEOPLE.entries()) ids[first] = await hire(stack, token, i, first, last);

    // A run paid ahead, so each payment's reversal window is open.
    const pay = 10;
    const submitted = await stack.request('POST', '/v1/payroll', {
      token,
      body: {
        type: 'off_cycle',
        pay_period_start: daysAhead(pay - 19),
        pay_period_end: daysAhead(pay - 5),
        pay_date: daysAhead(pay),
        employees: PEOPLE.map(([first], i) => ({
          employee_id: ids[first],
          gross_pay: (2000 + 150 * i).toFixed(2),
          hours_worked: 80,
          deductions: { taxes: (400 + 30 * i).toFixed(2) },
        })),
      },
    });
    expect(submitted.status, submitted.text).toBe(202);
    runId = submitted.body.data.payroll_id;
    await vi.waitFor(async () => expect((await getRun()).status).toBe('completed'), { timeout: 30_000, interval: 200 });
    const run = await getRun();
    expect(run.funding).toMatchObject({ status: 'scheduled', amount: run.totals.net_pay, redebits: [] });
    fileId = run.disbursement.file_id;
    expect(fileId).toMatch(/^file_/);

    browser = await launchChromium();
    admin = await newPage(browser, base, LAPTOP);
    await signIn(admin.page, base, token);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('lists the run’s file on the Files page, filters it in the address, and downloads it as <file_id>.ach', async () => {
    const page = admin.page;
    await nav(page, 'Files').click();
    await page.getByRole('heading', { level: 1, name: 'Files' }).waitFor();
    const table = page.getByTestId('files-table');
    const row = table.locator(`tr[data-file-id="${fileId}"]`);
    await row.waitFor();
    const run = await getRun();
    expect(await row.getAttribute('data-type')).toBe('payroll');
    expect(await row.locator('td[data-label="File"]').textContent()).toContain('Payroll');
    const link = row.locator('td[data-label="Run"]').getByRole('link');
    expect(await link.getAttribute('href')).toBe(`#/payrolls/${runId}`);
    expect(await row.locator('td[data-label="Settles"]').textContent()).toContain(day(run.effective_entry_date));
    expect(await row.getByTestId('release-by').textContent()).toBe(`release by ${day(run.release_by)}`);
    const totals = await row.locator('td[data-label="Totals"]').textContent();
    expect(totals).toContain(`${PEOPLE.length + 1} entries`);
    expect(totals).toContain(`credit ${money(run.totals.net_pay)}`);
    expect(totals).toContain(`debit ${money(run.totals.net_pay)}`);
    expect(await row.locator('td[data-label="Status"] .badge').textContent()).toBe('ready to send');
    expect(await nav(page, 'Files').getAttribute('aria-current')).toBe('page');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'files');
    expect(await overflowing(page)).toEqual([]);

    // The file itself, with the token, saved under its id: the bytes the API serves.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('button', { name: `Download ${fileId}.ach` }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${fileId}.ach`);
    const served = await stack.request('GET', `/v1/disbursement-files/${fileId}`, {
      token,
      headers: { Accept: 'text/plain' },
    });
    expect(served.status).toBe(200);
    expect(readFileSync((await download.path())!, 'utf8')).toBe(served.text);
    await page.getByTestId('download-saved').getByText(`Saved as ${fileId}.ach.`).waitFor();

    // Filters live in the address: a type with no file says so, and Clear brings everything back.
    await page.getByLabel('Type').selectOption({ label: 'Reversal' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByTestId('files-empty').getByText('No file matches these filters.').waitFor();
    expect(new URL(page.url()).hash).toBe('#/files?type=reversal');
    await page.getByRole('button', { name: 'Clear' }).click();
    await row.waitFor();
    expect(new URL(page.url()).hash).toBe('#/files');

    // An address with filters opens with them, the fields showing them.
    await page.goto(`${base}/dashboard/#/files?type=payroll&payroll_id=${runId}`);
    await row.waitFor();
    expect(await page.getByLabel('Type').inputValue()).toBe('payroll');
    expect(await page.getByLabel('Run', { exact: true }).inputValue()).toBe(runId);
    expect(await page.getByTestId('files-of-run').textContent()).toContain(runId);
  });

  it('tells a token without read:disbursements that the file needs it (403), while it may list the files', async () => {
    const ro = await newPage(browser, base, LAPTOP);
    try {
      await ro.page.goto(`${base}/dashboard/`);
      await ro.page.evaluate((t) => sessionStorage.setItem('payroll-dashboard.token', t), readOnly);
      await ro.page.goto(`${base}/dashboard/#/files`);
      await ro.page.reload();
      const row = ro.page.getByTestId('files-table').locator(`tr[data-file-id="${fileId}"]`);
      await row.waitFor();
      await row.getByRole('button', { name: `Download ${fileId}.ach` }).click();
      const refused = ro.page.getByTestId('download-refused');
      await refused.waitFor();
      expect(await refused.getAttribute('role')).toBe('alert');
      const text = await refused.textContent();
      expect(text).toContain('403 insufficient_scope');
      expect(text).toContain('read:disbursements');
      expect(text).toContain('Sign in with an admin key to download it');
      await ro.page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'download-refused');
      expect(await seriousAxeViolations(ro.page)).toEqual([]);
    } finally {
      await ro.context.close();
    }
  });

  it('reverses one payment from the run page: its window, a reason, a confirmation, then the reversal file', async () => {
    const page = admin.page;
    await openRun(page);
    const table = page.getByTestId('paystub-table');
    await table.waitFor();
    await settled(page);
    const ada = table.locator(`tr[data-paystub-id="${(await stubOf(ids.Ada!)).paystub_id}"]`);
    expect(await ada.getAttribute('data-payment-status')).toBe('scheduled');
    const until = (await ada.getByTestId('reversible-until').textContent()) ?? '';
    expect(until).toMatch(/^reversible until \w{3} \d{1,2}, \d{4}$/);

    const select = ada.getByRole('checkbox', { name: 'Select the payment of Ada Lovelace for reversal' });
    expect(await select.isEnabled()).toBe(true);
    const reverse = page.getByRole('button', { name: 'Reverse the payment…' });
    expect(await reverse.isDisabled()).toBe(true);
    await select.check();
    await page.getByTestId('reversal-selected').getByText('Ada Lovelace').waitFor();
    expect(await page.getByTestId('reversal-selected').getByTestId('window-ends').textContent()).toBe(` — ${until}`);
    // A reason is required before anything can be asked.
    expect(await reverse.isDisabled()).toBe(true);
    await page.getByLabel('Reason').selectOption('duplicate');
    await reverse.click();
    const dialog = page.getByRole('alertdialog');
    await dialog.getByText('Reverse the payment of Ada Lovelace').waitFor();
    expect(await dialog.textContent()).toContain('“duplicate”');
    expect(await seriousAxeViolations(page)).toEqual([]);

    const [request] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith(`/v1/payroll/${runId}/reversals`)),
      dialog.getByRole('button', { name: 'Yes, reverse' }).click(),
    ]);
    expect(request.headers()['idempotency-key']).toMatch(/^dashboard-[0-9a-f-]{36}$/);
    expect(JSON.parse(request.postData() ?? '{}')).toEqual({
      reason: 'duplicate',
      paystub_ids: [(await stubOf(ids.Ada!)).paystub_id],
    });
    const result = page.getByTestId('reversal-result');
    await result.waitFor();
    const stub = await stubOf(ids.Ada!);
    expect(stub.status).toBe('voided');
    expect(stub.payment.status).toBe('reversal_scheduled');
    expect(stub.payment.reversal.reason).toBe('duplicate');
    // The window the page showed is the API's.
    expect(until).toBe(`reversible until ${day(stub.payment.reversal.window_ends)}`);
    const reversalFile = stub.payment.reversal.file_id as string;
    expect(await result.textContent()).toContain(`Reversed 1 payment: file ${reversalFile}`);
    expect(await result.textContent()).toContain('Ada Lovelace');
    expect(await result.locator('.badge').textContent()).toBe('reversal scheduled');

    // The list read again: Ada's payment reversed and her paystub voided, no longer selectable; the run counts it.
    await vi.waitFor(async () => expect(await ada.getAttribute('data-payment-status')).toBe('reversal_scheduled'), {
      timeout: 10_000,
    });
    expect(await ada.locator('td[data-label="Status"] .badge').textContent()).toBe('voided');
    expect(await ada.getByTestId('reversal-status').textContent()).toContain('reversal scheduled');
    expect(await ada.getByRole('checkbox').isDisabled()).toBe(true);
    expect(await ada.getByRole('checkbox').getAttribute('aria-label')).toBe(
      'The payment of Ada Lovelace cannot be reversed: reversed already',
    );
    await page
      .getByTestId('reversals')
      .getByText(`Reversed: 1 payment, ${money(stub.net_pay)}.`)
      .waitFor();
    expect(await page.getByTestId('reversal-selection').textContent()).toBe('No payment selected.');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'payroll-reversal', true);

    // The reversal file, among the run's files.
    await result.getByRole('link', { name: 'See it among the files' }).click();
    await page.getByRole('heading', { level: 1, name: 'Files' }).waitFor();
    const row = page.getByTestId('files-table').locator(`tr[data-file-id="${reversalFile}"]`);
    await row.waitFor();
    expect(new URL(page.url()).hash).toBe(`#/files?payroll_id=${runId}&type=reversal`);
    expect(await row.getAttribute('data-type')).toBe('reversal');
    expect(await row.locator('td[data-label="File"]').textContent()).toContain('Reversal (duplicate)');
    expect(await page.getByTestId('files-table').locator('tbody tr').count()).toBe(1);
  });

  it('names the payment a refused reversal is about (reversed meanwhile: 409), and reads the list again', async () => {
    const page = admin.page;
    await openRun(page);
    const grace = await stubOf(ids.Grace!);
    const row = page.getByTestId('paystub-table').locator(`tr[data-paystub-id="${grace.paystub_id}"]`);
    await row.getByRole('checkbox', { name: 'Select the payment of Grace Hopper for reversal' }).check();
    await page.getByLabel('Reason').selectOption('incorrect_amount');
    // Reversed elsewhere while this page shows it in the file.
    const elsewhere = await stack.request('POST', `/v1/payroll/${runId}/reversals`, {
      token,
      body: { reason: 'incorrect_amount', paystub_ids: [grace.paystub_id] },
    });
    expect(elsewhere.status, elsewhere.text).toBe(201);
    await page.getByRole('button', { name: 'Reverse the payment…' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, reverse' }).click();
    const refused = page.getByTestId('reversal-refused');
    await refused.waitFor();
    expect(await refused.getAttribute('role')).toBe('alert');
    const text = await refused.textContent();
    expect(text).toContain('409 already_reversed');
    expect(text).toContain('Grace Hopper:');
    // Focus is on the refusal (the question is gone), and nothing else was reversed.
    await page.waitForFunction(
      () => document.activeElement?.firstElementChild?.getAttribute('data-testid') === 'reversal-refused',
    );
    expect((await getRun()).reversals.count).toBe(2);
    // The list read again shows it reversed, no longer selectable; the refusal still names her.
    await vi.waitFor(async () => expect(await row.getAttribute('data-payment-status')).toBe('reversal_scheduled'), {
      timeout: 10_000,
    });
    expect(await row.getByRole('checkbox').isDisabled()).toBe(true);
    expect(await page.getByTestId('reversal-selection').textContent()).toBe('No payment selected.');
    expect(await refused.textContent()).toContain('Grace Hopper:');
    // The run read again too: it counts both reversals.
    await page.getByTestId('reversals').getByText('Reversed: 2 payments').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('explains the hold when the bank returns the funding debit, and re-debits it from the console', async () => {
    const before = await getRun();
    expect(await bankReturn(before.funding.trace_number, 'R01')).toBe('applied');
    const page = admin.page;
    await openRun(page);
    const card = page.getByTestId('funding');
    await card.waitFor();
    expect(await card.getByTestId('funding-status').textContent()).toContain('Returned by the bank');
    expect(await card.getByTestId('funding-status').textContent()).toContain('R01: Insufficient funds');
    const hold = await card.getByTestId('funding-hold-explained').textContent();
    expect(hold).toContain('new payrolls and approvals are refused');
    expect(hold).toContain('funding_hold');
    expect(await card.getByTestId('funding-return').textContent()).toContain('R01');
    expect(await card.getByTestId('funding-facts').textContent()).toContain(before.funding.trace_number);
    expect(await card.getByRole('link', { name: 'The files of this run' }).getAttribute('href')).toBe(
      `#/files?payroll_id=${runId}`,
    );
    await settled(page);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'payroll-funding-returned', true);

    // The hold, where the organization's state is shown: the runs list and the settings, naming the run.
    const settings = (await stack.request('GET', '/v1/settings', { token })).body.data;
    expect(settings.funding_hold).toMatchObject({ payroll_id: runId, code: 'R01' });
    for (const [link, title] of [
      ['Payrolls', 'Payrolls'],
      ['Settings', 'Settings'],
    ] as const) {
      await nav(page, link).click();
      await page.getByRole('heading', { level: 1, name: title }).waitFor();
      const banner = page.getByTestId('funding-hold');
      await banner.waitFor();
      expect(await banner.getByRole('link').first().getAttribute('href')).toBe(`#/payrolls/${runId}`);
      expect(await banner.textContent()).toContain('(R01)');
      expect(await banner.textContent()).toContain('New payrolls and approvals are refused');
      expect(await seriousAxeViolations(page)).toEqual([]);
    }
    // A new run is refused meanwhile: the submission page says where the hold is lifted.
    await nav(page, 'Payrolls').click();
    await page.getByRole('link', { name: 'Submit a run from a CSV' }).click();
    await page.getByRole('heading', { level: 1, name: 'Submit a payroll run' }).waitFor();
    await page.getByLabel('Pay period start').fill(daysAhead(30));
    await page.getByLabel('Pay period end').fill(daysAhead(43));
    await page.getByLabel('Pay date').fill(daysAhead(45));
    await page.getByLabel('CSV file').setInputFiles({
      name: 'held.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`employee_id,hours,gross\n${ids.Grace},80,2000.00\n`),
    });
    await page.getByTestId('csv-summary').waitFor();
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    const refusal = page.getByTestId('funding-hold-refusal');
    await refusal.waitFor();
    expect(await refusal.getByRole('link').getAttribute('href')).toBe(`#/payrolls/${runId}`);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await refusal.getByRole('link').click();
    await card.waitFor();

    await card.getByRole('button', { name: 'Re-debit…' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.getByText(`Debit ${money(before.funding.amount)} from the funding account again`).waitFor();
    await dialog.getByRole('button', { name: 'Yes, re-debit' }).click();
    const notice = card.getByTestId('funding-notice');
    await notice.waitFor();
    expect(await notice.textContent()).toContain('Re-debited');
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'funding-notice');
    expect(await card.getByTestId('funding-status').textContent()).toContain('Re-debit scheduled');
    expect(await card.getByTestId('funding-hold-explained').count()).toBe(0);
    const after = await getRun();
    expect(after.funding.status).toBe('redebit_scheduled');
    expect(after.funding.redebits).toHaveLength(1);
    const redebits = card.getByTestId('redebits-table');
    expect(await redebits.locator('tbody tr').count()).toBe(1);
    expect(await redebits.textContent()).toContain(after.funding.redebits[0].trace_number);
    expect(await seriousAxeViolations(page)).toEqual([]);

    // The hold is lifted: the runs list says nothing of it any more.
    const [answered] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/v1/settings')),
      nav(page, 'Payrolls').click(),
    ]);
    expect((await answered.json()).data.funding_hold).toBeNull();
    await page.getByTestId('payroll-table').waitFor();
    expect(await page.getByTestId('funding-hold').count()).toBe(0);

    await nav(page, 'Files').click();
    const redebitRow = page
      .getByTestId('files-table')
      .locator(`tr[data-file-id="${after.funding.redebits[0].file_id}"]`);
    await redebitRow.waitFor();
    expect(await redebitRow.getAttribute('data-type')).toBe('redebit');
  });

  it('says why a re-debit is refused (a return code NACHA does not allow), then records a payment by wire', async () => {
    const before = await getRun();
    expect(await bankReturn(before.funding.redebits[0].trace_number, 'R02')).toBe('applied');
    expect((await getRun()).funding.status).toBe('returned');
    const page = admin.page;
    await openRun(page);
    const card = page.getByTestId('funding');
    await card.getByTestId('funding-hold-explained').waitFor();
    expect(await card.getByTestId('redebit-hint').textContent()).toContain('returned R02');
    expect(await card.getByTestId('redebits-table').textContent()).toContain('R02');

    await card.getByRole('button', { name: 'Re-debit…' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, re-debit' }).click();
    const refused = card.getByTestId('redebit-refused');
    await refused.waitFor();
    expect(await refused.getAttribute('role')).toBe('alert');
    expect(await refused.textContent()).toContain('422 redebit_not_allowed, return_code');
    expect(await refused.textContent()).toContain('R01 (insufficient funds) or R09 (uncollected funds)');
    expect((await getRun()).funding.status).toBe('returned');

    await card.getByLabel('Paid by').selectOption('wire');
    await card.getByLabel('Reference').fill('20261130MMQFMP9T000123');
    await card.getByRole('button', { name: 'Record the payment' }).click();
    await card.getByTestId('funding-notice').getByText('Recorded').waitFor();
    expect(await card.getByTestId('funding-status').textContent()).toContain('Paid by other means');
    expect(await card.getByTestId('funding-resolution').textContent()).toContain(
      'Wire, reference 20261130MMQFMP9T000123',
    );
    const after = await getRun();
    expect(after.funding).toMatchObject({
      status: 'resolved',
      resolution: { method: 'wire', reference: '20261130MMQFMP9T000123' },
    });
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('fits a phone: the Files page and the run’s funding card, without sideways scrolling', async () => {
    const phone = await newPage(browser, base, PHONE, 2);
    try {
      await signIn(phone.page, base, token);
      await phone.page.goto(`${base}/dashboard/#/files`);
      await phone.page.getByTestId('files-table').waitFor();
      expect(await overflowing(phone.page)).toEqual([]);
      expect(await seriousAxeViolations(phone.page)).toEqual([]);
      await openRun(phone.page);
      await phone.page.getByTestId('funding').waitFor();
      await phone.page.getByTestId('paystub-table').waitFor();
      await settled(phone.page);
      expect(await overflowing(phone.page)).toEqual([]);
      expect(await seriousAxeViolations(phone.page)).toEqual([]);
    } finally {
      await phone.context.close();
    }
  });
});
