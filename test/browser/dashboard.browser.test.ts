import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  activeElement,
  hasChromium,
  hire as hireThrough,
  LAPTOP,
  launchChromium,
  nav,
  newPage as newPageAt,
  PHONE,
  shoot,
  signIn as signInWith,
} from './support.js';
import { startLocalStack, startWorkersProcess, type RunningStack } from '../support/local-stack.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * The developer dashboard in a real Chromium (Debian's package, driven by playwright-core: no browser download)
 * against a local stack, as a developer uses it: sign in, keys, a payroll submitted through the API and watched to
 * completion, a paystub PDF, webhooks, the audit log, employees, the organization's settings, and a phone-sized screen.
 *
 * `UPDATE_SCREENSHOTS=1 npm run test:browser` also writes the console's pictures (docs/operations.md) to docs/screenshots/.
 */
let stack: RunningStack;
let workers: { stop(): Promise<void> } | undefined;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let token: string;
let base: string;
const employeeIds: string[] = [];
let payrollId: string;
const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];

const newPage = (viewport: { width: number; height: number }, deviceScaleFactor = 1) =>
  newPageAt(browser, base, viewport, deviceScaleFactor);
const hire = (n: number, first: string, last: string) => hireThrough(stack, token, n, first, last);
const signIn = (p: Page) => signInWith(p, base, token);

const NAMES = [
  ['Ada', 'Lovelace'],
  ['Grace', 'Hopper'],
  ['Alan', 'Turing'],
  ['Katherine', 'Johnson'],
  ['Edsger', 'Dijkstra'],
  ['Barbara', 'Liskov'],
  ['Donald', 'Knuth'],
  ['Margaret', 'Hamilton'],
  ['John', 'Backus'],
  ['Frances', 'Allen'],
  ['Ken', 'Thompson'],
  ['Radia', 'Perlman'],
];

describe.skipIf(!hasChromium)('developer dashboard in Chromium', () => {
  beforeAll(async () => {
    // Workers in their own process, started by the payroll test: the run waits, pending, until the page is watching.
    // Small chunks make the progress bar move in steps.
    stack = await startLocalStack({ env: { PAYROLL_LOCAL_WORKERS: 'external', PAYROLL_CHUNK_SIZE: '2' } });
    // The workers process takes this process's environment: retries a second apart, so a failed delivery shows soon.
    process.env.PAYROLL_WEBHOOK_RETRY_DELAYS_S = '1,1';
    base = `https://localhost:${stack.state.https_port}`;
    ({ token } = await stack.createOrganization('Acme Robotics'));
    for (const [i, [first, last]] of NAMES.entries()) employeeIds.push(await hire(i, first!, last!));
    browser = await launchChromium();
    ({ context, page } = await newPage(LAPTOP));
  });

  afterAll(async () => {
    await browser?.close();
    await workers?.stop();
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.stop();
  });

  it('signs in with the keyboard alone, refuses a bad token with the API’s message, and keeps the token in session storage only', async () => {
    await page.goto(`${base}/dashboard/`);
    await page.getByRole('heading', { level: 1, name: 'Payroll API dashboard' }).waitFor();
    // The token field has focus on arrival: type, Enter.
    await page.waitForFunction(() => document.activeElement?.id === 'token');
    await page.keyboard.type('pk_sandbox_not-a-real-token');
    await page.keyboard.press('Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/Sign-in failed.*\(401 unauthorized\)/);
    expect((await activeElement(page)).id).toBe('token');

    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type(token);
    await page.keyboard.press('Tab');
    expect(await activeElement(page)).toMatchObject({ tag: 'BUTTON', text: 'Sign in' });
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Payrolls' }).waitFor();
    // The new page's heading takes focus, so a screen reader starts reading there.
    await page.waitForFunction(() => document.activeElement?.tagName === 'H1');

    const storage = await page.evaluate(() => ({
      session: sessionStorage.getItem('payroll-dashboard.token'),
      local: localStorage.length,
      cookie: document.cookie,
    }));
    expect(storage).toEqual({ session: token, local: 0, cookie: '' });
    expect(await context.cookies()).toEqual([]);
  });

  it('creates a key and shows its token once, with a copy button; rotates and revokes keys', async () => {
    await nav(page, 'API keys').click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Ledger sync');
    await page.getByLabel('Type', { exact: true }).selectOption('payroll-submitter');
    await page.getByRole('button', { name: 'Create key' }).click();

    const secret = page.getByTestId('secret-once');
    await secret.waitFor();
    const created = await secret.locator('input').inputValue();
    expect(created).toMatch(/^pk_sandbox_/);
    expect(await secret.textContent()).toContain('will not be shown again');
    expect((await stack.request('GET', '/v1/employees', { token: created })).status).toBe(200);
    await secret.getByRole('button', { name: /^Copy/ }).click();
    await page.getByText('Copied to the clipboard').waitFor({ state: 'attached' });
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(created);
    const row = page.getByRole('row').filter({ hasText: 'Ledger sync' });
    await row.waitFor();
    expect(await row.textContent()).toContain('payroll-submitter');
    await stack.request('POST', '/v1/api-keys', { token, body: { name: 'Nightly export', type: 'read-only' } });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('row').filter({ hasText: 'Nightly export' }).waitFor();
    await shoot(page, 'api-keys');

    // Gone after navigating away and back: the token lived only in the page's memory.
    await nav(page, 'Logs').click();
    await page.getByRole('heading', { level: 1, name: 'Logs' }).waitFor();
    await nav(page, 'API keys').click();
    await page.getByRole('row').filter({ hasText: 'Ledger sync' }).waitFor();
    expect(await page.getByTestId('secret-once').count()).toBe(0);
    expect(await page.content()).not.toContain(created);
    expect(
      await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage })),
    ).not.toContain(created);

    // Rotate with no grace: a new token, shown once; the old one stops at once.
    await page.getByLabel('Grace period for the old token of Ledger sync').selectOption('0');
    await page.getByRole('button', { name: 'Rotate Ledger sync' }).click();
    await page.getByTestId('secret-once').waitFor();
    const rotated = await page.getByTestId('secret-once').locator('input').inputValue();
    expect(rotated).not.toBe(created);
    // Nothing caches a token: the very next request with the rotated-out one is refused.
    expect((await stack.request('GET', '/v1/employees', { token: created })).status).toBe(401);
    expect((await stack.request('GET', '/v1/employees', { token: rotated })).status).toBe(200);
    await page.getByRole('button', { name: 'I have copied it, hide it' }).click();

    await page.getByRole('button', { name: 'Revoke Ledger sync' }).click();
    await page.getByRole('row').filter({ hasText: 'Ledger sync' }).getByText('revoked').waitFor();
    // At once on the function that revoked it (the admin function); within the cache bound on the employees one.
    expect((await stack.request('GET', '/v1/api-keys', { token: rotated })).status).toBe(401);
    await expect
      .poll(async () => (await stack.request('GET', '/v1/employees', { token: rotated })).status, {
        timeout: 7000,
        interval: 250,
      })
      .toBe(401);
  });

  it('registers webhook endpoints and shows their secret once', async () => {
    const ok = await startReceiver();
    const failing = await startReceiver(() => 500);
    receivers.push(ok, failing);
    await nav(page, 'Webhooks').click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    for (const [url, description, events] of [
      [ok.url, 'Ledger', []],
      [failing.url, 'Broken staging receiver', ['payroll.completed', 'payroll.failed']],
    ] as const) {
      await page.getByLabel('URL').fill(url);
      await page.getByLabel('Description (optional)').fill(description);
      for (const e of events) await page.getByLabel(e, { exact: true }).check();
      await page.getByRole('button', { name: 'Register endpoint' }).click();
      await page.getByTestId('secret-once').waitFor();
      expect(await page.getByTestId('secret-once').locator('input').inputValue()).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'I have copied it, hide it' }).click();
      await page.getByRole('row').filter({ hasText: url }).waitFor();
    }
  });

  it('adds an employee, shows the API’s field errors, and searches', async () => {
    await nav(page, 'Employees').click();
    await page.getByRole('heading', { level: 1, name: 'Employees' }).waitFor();
    await page.getByText(`${NAMES.length} of ${NAMES.length} employees`).waitFor();
    await page.getByRole('button', { name: 'Add an employee' }).click();
    await page.getByLabel('First name').fill('Hedy');
    await page.getByLabel('Last name').fill('Lamarr');
    await page.getByLabel('Email').fill('hedy@example.com');
    await page.getByLabel('Start date').fill('2026-02-02');
    await page.getByLabel('Account number').fill('99887766');
    await page.getByLabel('Routing number').fill('021000022');
    await page.getByRole('button', { name: 'Add employee' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Invalid request body');
    expect(await alert.textContent()).toContain('bank_account.routing_number');
    // The field's own message is tied to the input.
    const routing = page.getByLabel('Routing number');
    expect(await routing.getAttribute('aria-invalid')).toBe('true');
    await routing.fill('021000021');
    await page.getByRole('button', { name: 'Add employee' }).click();
    await page.getByText(/Hedy Lamarr was added/).waitFor();
    await page.getByText(`${NAMES.length + 1} of ${NAMES.length + 1} employees`).waitFor();

    await page.getByLabel('Search employees').fill('hopper');
    await page.getByText('1 of 13 employees match “hopper”').waitFor();
    expect(await page.getByTestId('employee-table').getByRole('row').count()).toBe(2);
    await page.getByLabel('Search employees').fill('');
    await shoot(page, 'employees');
  });

  it('watches a payroll submitted through the API go from pending to completed, with a live progress bar', async () => {
    const submitted = await stack.request('POST', '/v1/payroll', {
      token,
      body: {
        pay_period_start: '2026-11-01',
        pay_period_end: '2026-11-14',
        pay_date: '2026-11-20',
        employees: employeeIds.map((id, i) => ({
          employee_id: id,
          gross_pay: (3200 + 125 * i).toFixed(2),
          hours_worked: 80,
          bonuses: i % 3 === 0 ? 150 : 0,
          deductions: { taxes: (640 + 20 * i).toFixed(2), benefits: 120 },
        })),
      },
    });
    expect(submitted.status, submitted.text).toBe(202);
    payrollId = submitted.body.data.payroll_id;

    await nav(page, 'Payrolls').click();
    const row = page.locator(`tr[data-payroll-id="${payrollId}"]`);
    await row.waitFor();
    // The status under the lifecycle's label for it (shared/domain/payroll-lifecycle.ts).
    expect(await row.locator('td[data-label="Status"] .badge').textContent()).toBe('Pending');
    await row.getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: 'Payroll run' }).waitFor();
    const bar = page.getByRole('progressbar', { name: 'Payroll processing progress' });
    await bar.waitFor();
    expect(
      await bar.evaluate((el) => ({ value: (el as HTMLProgressElement).value, max: (el as HTMLProgressElement).max })),
    ).toEqual({ value: 0, max: NAMES.length });
    await shoot(page, 'payroll-pending');

    // Watch the page (it polls every second) while the workers process the run, chunk by chunk.
    const seen: { status: string; done: number }[] = [
      { status: (await page.getByTestId('run-status').textContent()) ?? '', done: 0 },
    ];
    workers = await startWorkersProcess(stack);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const state = await page.evaluate(() => ({
        status: document.querySelector('[data-testid="run-status"]')?.textContent ?? '',
        done:
          (document.querySelector('progress[aria-label="Payroll processing progress"]') as HTMLProgressElement | null)
            ?.value ?? -1,
      }));
      const last = seen[seen.length - 1];
      if (!last || last.status !== state.status || last.done !== state.done) seen.push(state);
      if (state.status.startsWith('This run is ')) break;
      expect(Date.now(), `the page never showed the run processed: ${JSON.stringify(seen)}`).toBeLessThan(deadline);
      await page.waitForTimeout(50);
    }
    expect(seen[0]!.status).toContain('Waiting to be processed');
    expect(seen[seen.length - 1]).toEqual({ status: 'This run is processed.', done: NAMES.length });
    // Progress only moves forward.
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.done).toBeGreaterThanOrEqual(seen[i - 1]!.done);

    const totals = submitted.body.data.totals as { net_pay: number };
    const net = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(totals.net_pay);
    expect(await page.getByTestId('totals').textContent()).toContain(net);
    await page.getByTestId('paystub-table').waitFor();
    expect(await page.getByTestId('paystub-table').getByRole('row').count()).toBe(NAMES.length + 1);
    await shoot(page, 'payroll-run');
  });

  it('opens a paystub PDF fetched with the token, as a blob', async () => {
    const button = page.getByRole('button', { name: 'Open the PDF paystub of Ada Lovelace' });
    const [response, popup] = await Promise.all([
      page.waitForResponse(
        (r) => r.url().includes('/v1/paystubs/') && r.request().headers().accept === 'application/pdf',
      ),
      context.waitForEvent('page'),
      button.click(),
    ]);
    expect(response.status()).toBe(200);
    expect(response.headers()['content-type']).toBe('application/pdf');
    expect((await response.request().allHeaders()).authorization).toBe(`Bearer ${token}`);
    await popup.waitForURL(/^blob:https:\/\/localhost:\d+\//);
    // Chromium's PDF viewer shows it (nothing in the site's policy blocks a blob: document from the site itself).
    await popup.waitForLoadState();
    expect(await popup.evaluate(() => document.contentType)).toBe('application/pdf');
    await popup.close();

    // The same blob, downloaded from the link the page offers: a PDF.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'download it' }).click(),
    ]);
    const file = await download.path();
    expect(readFileSync(file).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(download.suggestedFilename()).toBe('paystub-ada-lovelace.pdf');
  });

  it('lists runs with a live progress bar for one still to process, and updates the list as it completes', async () => {
    // Stop the workers so the next run waits, pending, where the list can show it: once the first run's deliveries
    // are all done (six events to the ledger, three attempts to the broken receiver), so no message is in flight.
    // The local queue engine may still answer the stopped worker's last long poll (1 s) with a message nobody would
    // handle: let that lapse before sending anything.
    await receivers[0]!.waitFor((r) => r.length >= 6);
    await receivers[1]!.waitFor((r) => r.length >= 3);
    await workers!.stop();
    await new Promise((r) => setTimeout(r, 1500));
    const second = await stack.request('POST', '/v1/payroll', {
      token,
      body: {
        type: 'off_cycle',
        pay_period_start: '2026-11-01',
        pay_period_end: '2026-11-14',
        pay_date: '2026-11-25',
        employees: employeeIds
          .slice(0, 4)
          .map((id) => ({ employee_id: id, gross_pay: 0, bonuses: 500, hours_worked: 0, deductions: { taxes: 110 } })),
      },
    });
    expect(second.status, second.text).toBe(202);
    const secondId = second.body.data.payroll_id as string;
    await nav(page, 'Payrolls').click();
    const row = page.locator(`tr[data-payroll-id="${secondId}"]`);
    await row.waitFor();
    await row.getByRole('progressbar', { name: `Progress of ${secondId}` }).waitFor();
    await shoot(page, 'payrolls');
    // The list refreshes itself every 2 s while a run on it is unfinished.
    workers = await startWorkersProcess(stack);
    await row.getByText('Processed', { exact: true }).waitFor({ timeout: 20_000 });
    expect(await row.getByRole('progressbar').count()).toBe(0);
  });

  it('shows each event’s deliveries and redelivers one', async () => {
    // Six events of each run reach the ledger; the broken receiver gets each payroll.completed three times.
    await receivers[0]!.waitFor((r) => r.length >= 12);
    await receivers[1]!.waitFor((r) => r.length >= 6);
    await nav(page, 'Webhooks').click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    // Newest first: the second run's payroll.completed.
    const completed = page.getByTestId('event-table').getByRole('row').filter({ hasText: 'payroll.completed' }).first();
    for (let i = 0; !(await completed.textContent())?.includes('failed'); i++) {
      expect(i, 'the failed delivery never showed').toBeLessThan(40);
      await page.waitForTimeout(500);
      await page.getByRole('button', { name: 'Refresh' }).nth(1).click();
    }
    expect(await completed.textContent()).toContain('3 attempts');
    await shoot(page, 'webhooks');
    await completed.getByRole('button', { name: /^Redeliver/ }).click();
    await page.getByText(/Redelivery of payroll\.completed .* queued/).waitFor({ state: 'attached' });
    await receivers[0]!.waitFor((r) => r.filter((x) => x.body.includes('"payroll.completed"')).length >= 3);
  });

  it('shows the requests in Developer → Logs, filtered', async () => {
    await nav(page, 'Logs').click();
    await page.getByRole('heading', { level: 1, name: 'Logs' }).waitFor();
    // The dashboard's own calls are there, newest first.
    await page.getByTestId('log-table').getByRole('row').filter({ hasText: 'GET /v1/webhooks' }).first().waitFor();
    await shoot(page, 'logs');

    const statuses = (expected: string) =>
      page
        .waitForFunction(
          (status) => {
            const cells = [...document.querySelectorAll('[data-testid="log-table"] td[data-label="Status"]')];
            return cells.length > 0 && cells.every((c) => c.textContent === status);
          },
          expected,
          { timeout: 10_000 },
        )
        .catch(async (err: unknown) => {
          throw new Error(`${String(err)}\n${await page.locator('main').textContent()}`);
        });
    const rows = page.getByTestId('log-table').locator('tbody tr');

    // The payroll submitted through the API.
    await page.getByLabel('Path starts with').fill('/v1/payroll');
    await page.getByLabel('Status code').fill('202');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await statuses('202');
    expect(await rows.filter({ hasText: 'POST /v1/payroll' }).count()).toBe(2);

    // The old token used after its rotation (no grace): refused, the line saying why. (A revoked token is unknown:
    // its failures belong to no organization.)
    await page.getByLabel('Path starts with').fill('');
    await page.getByLabel('Status code').fill('401');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await statuses('401');
    expect(await rows.filter({ hasText: 'Refused' }).count()).toBe(await rows.count());
    await page.getByRole('button', { name: 'Clear' }).click();
  });

  it('shows the organization’s sandbox originator in Settings, and no funding account', async () => {
    const stored = (await stack.request('GET', '/v1/settings', { token })).body.data as {
      originator: Record<string, string>;
      funding_account: unknown;
    };
    expect(stored.funding_account).toBeNull();
    await nav(page, 'Settings').click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByRole('heading', { name: 'NACHA originator' }).waitFor();
    const field = (label: string) => page.getByLabel(label, { exact: true });
    expect(await field('Company name').inputValue()).toBe('ACME ROBOTICS');
    expect(await field('Company identification').inputValue()).toBe('1000000001');
    expect(await field('Immediate destination name').inputValue()).toBe('SANDBOX BANK');
    expect(await field('Immediate origin').inputValue()).toBe('1000000001');
    expect(await field('Immediate origin name').inputValue()).toBe('PAYROLL API');
    // The organization's own sandbox ODFI, and the routing number it makes.
    expect(await field('Originating DFI').inputValue()).toBe(stored.originator.originating_dfi_identification);
    expect(await field('Immediate destination').inputValue()).toBe(stored.originator.immediate_destination);
    expect(await page.getByTestId('funding-account').textContent()).toBe(
      'No funding account: files carry credits only.',
    );
    expect(await page.getByTestId('settings-explainer').textContent()).toMatch(
      /one offset debit.*replace every placeholder/,
    );
    // A sandbox organization has no placeholder to replace.
    expect(await page.getByText('Payroll is refused until').count()).toBe(0);
  });

  it('saves only the originator fields changed, and shows the API’s error next to its field', async () => {
    const origin = page.getByLabel('Immediate origin', { exact: true });
    await origin.fill('acmepayrol');
    const [refused] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith('/v1/settings')),
      page.getByRole('button', { name: 'Save originator' }).click(),
    ]);
    expect(refused.postDataJSON()).toEqual({ originator: { immediate_origin: 'acmepayrol' } });
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('originator.immediate_origin');
    // The field's own message, next to the input and tied to it.
    expect(await origin.getAttribute('aria-invalid')).toBe('true');
    const error = page.locator('#settings-immediate-origin-error');
    expect(await error.textContent()).toMatch(/10 characters, digits and uppercase letters/);
    expect(await origin.getAttribute('aria-describedby')).toContain('settings-immediate-origin-error');
    expect(await page.getByLabel('Company name', { exact: true }).getAttribute('aria-invalid')).toBeNull();

    // Back to the stored value (not sent), and a new company name (sent, stored uppercase).
    await origin.fill('1000000001');
    await page.getByLabel('Company name', { exact: true }).fill('Acme Robotics Co');
    const [accepted] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith('/v1/settings')),
      page.getByRole('button', { name: 'Save originator' }).click(),
    ]);
    expect(accepted.postDataJSON()).toEqual({ originator: { company_name: 'Acme Robotics Co' } });
    await page.getByText('Originator saved: company name.').waitFor();
    expect(await page.getByLabel('Company name', { exact: true }).inputValue()).toBe('ACME ROBOTICS CO');
    expect(await origin.getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByRole('alert').count()).toBe(0);
    const stored = (await stack.request('GET', '/v1/settings', { token })).body.data;
    expect(stored.originator).toMatchObject({ company_name: 'ACME ROBOTICS CO', immediate_origin: '1000000001' });
  });

  it('sets a funding account and shows it masked only, then removes it', async () => {
    const accountNumber = '4400123456789';
    await page.getByLabel('Routing number').fill('021000022');
    await page.getByLabel('Account number').fill(accountNumber);
    await page.getByRole('button', { name: 'Save funding account' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByLabel('Routing number').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#funding-routing-error').isVisible()).toBe(true);
    // Refused: the number stays in the input, to correct the other field.
    expect(await page.getByLabel('Account number').inputValue()).toBe(accountNumber);

    await page.getByLabel('Routing number').fill('021000021');
    await page.getByLabel('Account type').selectOption('checking');
    await page.getByRole('button', { name: 'Save funding account' }).click();
    const current = page.getByTestId('funding-account');
    await current.getByText('checking ••••6789 · routing 021000021').waitFor();
    await page.getByText('Funding account set: checking ••••6789 · routing 021000021.').waitFor();
    // Saved: the full number is gone from the input and appears nowhere in the page.
    expect(await page.getByLabel('Account number').inputValue()).toBe('');
    expect(await page.content()).not.toContain(accountNumber);
    expect(await page.locator('main').textContent()).not.toContain(accountNumber);
    const stored = (await stack.request('GET', '/v1/settings', { token })).body.data;
    expect(stored.funding_account).toEqual({
      routing_number: '021000021',
      account_number_last4: '6789',
      account_type: 'checking',
    });

    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await current.getByText('No funding account: files carry credits only.').waitFor();
    expect(await page.getByRole('button', { name: 'Remove', exact: true }).count()).toBe(0);
    expect((await stack.request('GET', '/v1/settings', { token })).body.data.funding_account).toBeNull();
  });

  it('works on a phone: no sideways scrolling, the run readable as cards', async () => {
    const phone = await newPage(PHONE, 2);
    try {
      await signIn(phone.page);
      await phone.page.goto(`${base}/dashboard/#/payrolls/${payrollId}`);
      await phone.page.getByTestId('paystub-table').waitFor();
      const widths = await phone.page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
      }));
      expect(widths.scroll).toBeLessThanOrEqual(widths.client);
      // Sign-out stays on screen.
      const signOut = await phone.page.getByRole('button', { name: 'Sign out' }).boundingBox();
      expect(signOut!.x + signOut!.width).toBeLessThanOrEqual(PHONE.width);
      // Table headers are hidden; each cell carries its column's name.
      expect(
        await phone.page.getByTestId('paystub-table').locator('td[data-label="Net pay"]').first().isVisible(),
      ).toBe(true);
      await shoot(phone.page, 'phone-payroll-run');
      await phone.page.goto(`${base}/dashboard/#/keys`);
      await phone.page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      const keys = await phone.page.evaluate(
        () => document.documentElement.scrollWidth <= document.documentElement.clientWidth,
      );
      expect(keys).toBe(true);
    } finally {
      await phone.context.close();
    }
  });

  it('shows a deposit the bank returned on the run, and the employee’s account as invalid', async () => {
    const stubs = await stack.request('GET', `/v1/paystubs?payroll_id=${payrollId}&limit=100`, { token });
    const ada = (stubs.body.data.paystubs as { employee_name: string; payment: { trace_number: string } }[]).find(
      (p) => p.employee_name === 'Ada Lovelace',
    )!;
    const posted = await stack.request('POST', '/v1/disbursement-returns', {
      token,
      body: { returns: [{ trace_number: ada.payment.trace_number, code: 'R03' }] },
    });
    expect(posted.status, posted.text).toBe(200);
    expect(posted.body.data.outcomes[0].outcome).toBe('applied');

    await page.goto(`${base}/dashboard/#/payrolls/${payrollId}`);
    await page.getByTestId('returns-table').waitFor();
    await page.getByTestId('paystub-table').waitFor();
    expect(await page.getByTestId('returns').textContent()).toMatch(
      /Returned by the bank: 1 deposit, \$[\d,]+\.\d\d\./,
    );
    const rows = page.getByTestId('returns-table').locator('tbody tr');
    expect(await rows.count()).toBe(1);
    const row = (await rows.first().textContent()) ?? '';
    expect(row).toContain('Ada Lovelace');
    expect(row).toContain('R03');
    expect(row).toContain('No account / unable to locate account');
    const deposit = page.getByTestId('paystub-table').getByRole('row').filter({ hasText: 'Ada Lovelace' });
    expect(await deposit.locator('td[data-label="Deposit"]').textContent()).toContain('returned R03');
    expect(await deposit.locator('td[data-label="Deposit"]').textContent()).toContain('settles Nov 20, 2026');

    await nav(page, 'Employees').click();
    await page.getByTestId('invalid-accounts').waitFor();
    expect(await page.getByTestId('invalid-accounts').textContent()).toContain(
      '1 employee has an invalid bank account',
    );
    const employee = page.getByTestId('employee-table').getByRole('row').filter({ hasText: 'Ada Lovelace' });
    expect(await employee.locator('td[data-label="Direct deposit"]').textContent()).toContain(
      'invalid Deposit returned R03: No account / unable to locate account',
    );
  });

  it('sends a revoked session back to sign-in with the reason', async () => {
    const { page: p, context: ctx } = await newPage(LAPTOP);
    try {
      const short = await stack.request('POST', '/v1/api-keys', {
        token,
        body: { name: 'Short-lived admin', type: 'admin' },
      });
      const shortToken = short.body.data.token as string;
      await p.goto(`${base}/dashboard/`);
      await p.getByLabel('Admin token').fill(shortToken);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('heading', { level: 1, name: 'Payrolls' }).waitFor();
      await stack.request('DELETE', `/v1/api-keys/${short.body.data.api_key_id}`, { token });
      await nav(p, 'API keys').click();
      await p.getByText('Your session ended').waitFor();
      expect(await p.evaluate(() => sessionStorage.getItem('payroll-dashboard.token'))).toBeNull();
      // A read-only token is refused at sign-in, with the reason.
      const readOnly = await stack.request('POST', '/v1/api-keys', {
        token,
        body: { name: 'Reader', type: 'read-only' },
      });
      await p.getByLabel('Admin token').fill(readOnly.body.data.token as string);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByText('is not an admin token').waitFor();
    } finally {
      await ctx.close();
    }
  });
});
