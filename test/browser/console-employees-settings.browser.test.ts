import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  activeElement,
  hasChromium,
  hire,
  LAPTOP,
  launchChromium,
  nav,
  newPage,
  PHONE,
  seriousAxeViolations,
  shoot,
  signIn,
} from './support.js';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';

/**
 * Issue 22, points 2 and 3, in a real Chromium against a local stack, at a laptop's size and at a phone's: the
 * organization's settings (originator, funding account, compliance caps, configured values, the API's field-level
 * errors) and the employee page (details, masked bank account and its status after a return or a notification of
 * change, edit, a new bank account, paystub history with year-to-date, removal after a confirmation). Each size has
 * its own organization, so the two never see each other's changes.
 *
 * `UPDATE_SCREENSHOTS=1` also writes docs/screenshots/settings.png, employee.png and employee-phone.png.
 */
let stack: RunningStack;
let browser: Browser;
let base: string;

const FUNDING_ACCOUNT = '4400123456789';
const CORRECTED_ACCOUNT = '987654321';
const NEW_ACCOUNT = '7700112233';
const HTML_FIRST = '<img src=x onerror=alert(1)>';
const HTML_LAST = '<b>Bold</b>';
/** What `hire(n)` gives an employee as account number (test/support/browser.ts). */
const hiredAccount = (n: number) => String(55_000_100 + n);
const FULL_NUMBERS = [
  FUNDING_ACCOUNT,
  CORRECTED_ACCOUNT,
  NEW_ACCOUNT,
  hiredAccount(1),
  hiredAccount(2),
  hiredAccount(3),
];
const money = (n: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(n);

interface Stub {
  paystub_id: string;
  employee_id: string;
  net_pay: number;
  gross_pay: number;
  pay_date: string;
  year_to_date: { gross_pay: number; net_pay: number };
  payment: { trace_number: string };
}

interface Org {
  token: string;
  /** Ada: a deposit returned R03 (account invalid), then edited and given a new account. */
  ada: string;
  /** Grace: her account corrected by a notification of change, then removed. */
  grace: string;
  /** A name made of HTML, which must show as text. */
  html: string;
}

/** Waits for the stack's own workers to finish a run (a hook, where `expect.poll` is not available). */
async function completed(token: string, id: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = (await stack.request('GET', `/v1/payroll/${id}`, { token })).body.data.status as string;
    if (status === 'completed') return;
    if (Date.now() > deadline || ['failed', 'cancelled'].includes(status))
      throw new Error(`payroll ${id} is ${status}, not completed`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** An organization with a funding account, three employees paid by two completed runs, a return and a correction. */
async function prepare(name: string): Promise<Org> {
  const { token } = await stack.createOrganization(name);
  const funding = await stack.request('PATCH', '/v1/settings', {
    token,
    body: {
      funding_account: { routing_number: '021000021', account_number: FUNDING_ACCOUNT, account_type: 'checking' },
    },
  });
  expect(funding.status, funding.text).toBe(200);
  const ada = await hire(stack, token, 1, 'Ada', 'Lovelace');
  const grace = await hire(stack, token, 2, 'Grace', 'Hopper');
  const html = await hire(stack, token, 3, HTML_FIRST, HTML_LAST);
  const runs: string[] = [];
  for (const [start, end, pay] of [
    ['2026-10-01', '2026-10-14', '2026-10-20'],
    ['2026-10-15', '2026-10-28', '2026-11-03'],
  ] as const) {
    const res = await stack.request('POST', '/v1/payroll', {
      token,
      body: {
        pay_period_start: start,
        pay_period_end: end,
        pay_date: pay,
        employees: [ada, grace, html].map((id, i) => ({
          employee_id: id,
          gross_pay: (3000 + 250 * i).toFixed(2),
          hours_worked: 80,
          deductions: { taxes: (600 + 10 * i).toFixed(2), benefits: 120 },
        })),
      },
    });
    expect(res.status, res.text).toBe(202);
    const id = res.body.data.payroll_id as string;
    await completed(token, id);
    runs.push(id);
  }
  const stubs = (await stack.request('GET', `/v1/paystubs?payroll_id=${runs[1]}&limit=100`, { token })).body.data
    .paystubs as Stub[];
  const trace = (employee: string) => stubs.find((s) => s.employee_id === employee)!.payment.trace_number;
  const report = await stack.request('POST', '/v1/disbursement-returns', {
    token,
    body: {
      returns: [{ trace_number: trace(ada), code: 'R03' }],
      corrections: [{ trace_number: trace(grace), code: 'C01', corrected_data: CORRECTED_ACCOUNT }],
    },
  });
  expect(report.status, report.text).toBe(200);
  expect(report.body.data.outcomes.map((o: { outcome: string }) => o.outcome)).toEqual(['applied', 'applied']);
  return { token, ada, grace, html };
}

/** Every full account number this file uses: in no element's text, no input's value, nowhere in the markup. */
async function expectNoFullAccountNumber(p: Page): Promise<void> {
  const seen = await p.evaluate(() =>
    [
      document.documentElement.outerHTML,
      document.body.textContent ?? '',
      ...[...document.querySelectorAll('input, textarea, select')].map((e) => (e as HTMLInputElement).value),
    ].join('\n'),
  );
  for (const n of FULL_NUMBERS) expect(seen, `the page shows the full account number ${n}`).not.toContain(n);
}

async function expectNoSidewaysScroll(p: Page): Promise<void> {
  expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
}

/** Tab (forward only) until the focused element is the button or link named `name`; it must be reachable. */
async function tabTo(p: Page, name: string): Promise<void> {
  for (let i = 0; i < 80; i++) {
    await p.keyboard.press('Tab');
    const el = await activeElement(p);
    if ((el.tag === 'BUTTON' || el.tag === 'A') && el.text === name) return;
  }
  throw new Error(`“${name}” is not reachable with Tab`);
}

const SIZES = [
  { name: 'laptop', viewport: LAPTOP, scale: 1 },
  { name: 'phone', viewport: PHONE, scale: 2 },
] as const;

describe.skipIf(!hasChromium)('settings and the employee page in Chromium', () => {
  beforeAll(async () => {
    // Workers in the stack's own process: each run completes by itself.
    stack = await startLocalStack();
    base = `https://localhost:${stack.state.https_port}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  for (const size of SIZES) {
    describe(`at ${size.name} size`, () => {
      const phone = size.name === 'phone';
      let org: Org;
      let context: BrowserContext;
      let page: Page;
      /** Every dialog the page opened (only the confirmations may), and how the next one is answered. */
      const dialogs: string[] = [];
      let answer: 'accept' | 'dismiss' = 'accept';
      /** Anything the browser reported against the site's Content Security Policy. */
      const cspReports: string[] = [];

      const settings = async () => (await stack.request('GET', '/v1/settings', { token: org.token })).body.data;
      const employee = (id: string) => stack.request('GET', `/v1/employees/${id}`, { token: org.token });
      const axe = async () => expect(await seriousAxeViolations(page)).toEqual([]);

      beforeAll(async () => {
        org = await prepare(`Acme ${size.name}`);
        ({ context, page } = await newPage(browser, base, size.viewport, size.scale));
        page.removeAllListeners('dialog');
        page.on('dialog', (d) => {
          dialogs.push(d.message());
          void (answer === 'accept' ? d.accept() : d.dismiss());
        });
        page.on('console', (m) => {
          if (/Content Security Policy/i.test(m.text())) cspReports.push(m.text());
        });
        await signIn(page, base, org.token);
      });

      afterAll(async () => {
        await context?.close();
      });

      it('shows the originator, the funding account masked, the compliance caps and the configured values', async () => {
        const stored = await settings();
        await nav(page, 'Settings').click();
        await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
        await page.getByRole('heading', { name: 'NACHA originator' }).waitFor();
        for (const [field, value] of Object.entries(stored.originator as Record<string, string>))
          expect(await page.locator(`#settings-${field.replace(/_/g, '-')}`).inputValue(), field).toBe(value);
        expect(stored.originator.company_name).toBe(`ACME ${size.name.toUpperCase()}`);

        expect(await page.getByTestId('funding-account').textContent()).toBe('checking ••••6789 · routing 021000021');

        const caps = page.getByRole('region', { name: 'Compliance caps' });
        expect(await caps.textContent()).toContain(
          `now ${money(stored.max_net_pay_per_employee)} per employee and ${money(stored.max_payroll_total)} per run`,
        );
        expect(await page.getByLabel('Most net pay per employee').inputValue()).toBe('250000.00');
        expect(await page.getByLabel('Most net pay per run').inputValue()).toBe('100000000.00');

        expect(await page.getByLabel('Employment types').inputValue()).toBe('full_time\npart_time\ncontractor');
        expect(await page.getByLabel('Pay groups').inputValue()).toBe('default');
        expect(await page.getByLabel('Pay schedules').inputValue()).toBe('weekly\nbiweekly\nsemimonthly\nmonthly');

        await expectNoFullAccountNumber(page);
        await axe();
        if (phone) await expectNoSidewaysScroll(page);
        else await shoot(page, 'settings');
      });

      it('saves originator details with the keyboard alone', async () => {
        const name = page.getByLabel('Company name', { exact: true });
        await name.fill(`Acme ${size.name} Co`);
        await page.getByLabel('Immediate origin name', { exact: true }).focus();
        await page.keyboard.press('Tab');
        expect(await activeElement(page)).toMatchObject({ tag: 'BUTTON', text: 'Save originator' });
        const [sent] = await Promise.all([
          page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith('/v1/settings')),
          page.keyboard.press('Enter'),
        ]);
        expect(sent.postDataJSON()).toEqual({ originator: { company_name: `Acme ${size.name} Co` } });
        await page.getByText('Originator saved: company name.').waitFor();
        // Stored as the file writes it.
        expect(await name.inputValue()).toBe(`ACME ${size.name.toUpperCase()} CO`);
        expect((await settings()).originator.company_name).toBe(`ACME ${size.name.toUpperCase()} CO`);
      });

      it('shows each of the API’s field-level errors next to its field, then saves caps and values', async () => {
        // An originator field: a routing number whose check digit is wrong.
        const destination = page.getByLabel('Immediate destination', { exact: true });
        const storedDestination = await destination.inputValue();
        await destination.fill('021000022');
        await page.getByRole('button', { name: 'Save originator' }).click();
        await page.locator('#settings-immediate-destination-error').waitFor();
        expect(await destination.getAttribute('aria-invalid')).toBe('true');
        expect(await destination.getAttribute('aria-describedby')).toContain('settings-immediate-destination-error');
        expect(await page.getByRole('alert').textContent()).toContain('originator.immediate_destination');
        await destination.fill(storedDestination);
        await page.getByRole('button', { name: 'Undo changes' }).click();
        expect(await destination.getAttribute('aria-invalid')).toBeNull();

        // A cap above what one deposit can carry.
        const cap = page.getByLabel('Most net pay per employee');
        await cap.fill('100000000');
        await page.getByRole('button', { name: 'Save caps' }).click();
        const capError = page.locator('#settings-max-net-pay-per-employee-error');
        await capError.waitFor();
        expect(await capError.textContent()).toContain('Must be at most');
        expect(await cap.getAttribute('aria-invalid')).toBe('true');
        expect(await cap.getAttribute('aria-describedby')).toBe(
          'settings-max-net-pay-per-employee-hint settings-max-net-pay-per-employee-error',
        );
        expect(await page.getByLabel('Most net pay per run').getAttribute('aria-invalid')).toBeNull();

        // An item the API refuses is named by its line as typed: blank lines are not sent, yet count as lines.
        const groups = page.getByLabel('Pay groups');
        await groups.fill(`default\n\n${'h'.repeat(101)}`);
        await page.getByRole('button', { name: 'Save values' }).click();
        await page
          .locator('#settings-pay-groups-error')
          .getByText(/^Line 3: /)
          .waitFor();

        // A configured list with a value twice.
        await groups.fill('default\nhourly\nhourly');
        await page.getByRole('button', { name: 'Save values' }).click();
        const groupsError = page.locator('#settings-pay-groups-error');
        await groupsError.waitFor();
        expect(await groupsError.textContent()).toContain('Values must be unique');
        expect(await groups.getAttribute('aria-invalid')).toBe('true');
        expect(await groups.getAttribute('aria-describedby')).toContain('settings-pay-groups-error');
        // The page with its errors showing is as accessible as without.
        await axe();
        if (phone) await expectNoSidewaysScroll(page);

        await groups.fill('default\nhourly');
        await page.getByRole('button', { name: 'Save values' }).click();
        await page.getByText('Saved: pay groups.').waitFor();
        expect(await groups.getAttribute('aria-invalid')).toBeNull();
        await cap.fill('300000');
        await page.getByRole('button', { name: 'Save caps' }).click();
        await page.getByText('Saved: most net pay per employee.').waitFor();
        expect(await page.getByLabel('Most net pay per employee').inputValue()).toBe('300000.00');
        expect(await page.getByRole('alert').count()).toBe(0);
        expect(await settings()).toMatchObject({ pay_groups: ['default', 'hourly'], max_net_pay_per_employee: 300000 });
      });

      it('opens an employee from the list with the keyboard: details, and the account masked and invalid after a return', async () => {
        await nav(page, 'Employees').click();
        await page.getByRole('heading', { level: 1, name: 'Employees' }).waitFor();
        const link = page.getByRole('link', { name: 'Ada Lovelace' });
        await link.focus();
        await page.keyboard.press('Enter');
        await page.getByRole('heading', { level: 1, name: 'Ada Lovelace' }).waitFor();
        expect(page.url()).toMatch(new RegExp(`#/employees/${org.ada}$`));

        const details = (await page.getByTestId('employee-details').textContent()) ?? '';
        for (const text of ['ada.lovelace1@example.com', 'full_time', 'default', 'biweekly', 'Jan 5, 2026'])
          expect(details).toContain(text);
        const account = page.getByTestId('bank-account');
        expect(await account.textContent()).toContain('savings ••••0101 · routing 021000021');
        expect(await account.locator('.badge').textContent()).toBe('invalid');
        expect(await page.getByTestId('bank-account-invalid').textContent()).toContain(
          'Deposit returned R03: No account / unable to locate account',
        );
        await page.getByTestId('employee-paystubs').waitFor();
        await expectNoFullAccountNumber(page);
        await axe();
        if (phone) await expectNoSidewaysScroll(page);
      });

      it('edits a field with the keyboard, after showing the API’s error next to the field', async () => {
        const email = page.getByLabel('Email', { exact: true });
        const stored = await email.inputValue();
        await email.fill('not-an-email');
        await page.getByRole('button', { name: 'Save changes' }).click();
        await page.locator('#edit-email-error').waitFor();
        expect(await email.getAttribute('aria-invalid')).toBe('true');
        expect(await email.getAttribute('aria-describedby')).toBe('edit-email-error');
        await axe();

        await email.fill(stored);
        await page.getByLabel('Last name').fill('Lovelace-King');
        await tabTo(page, 'Save changes');
        const [sent] = await Promise.all([
          page.waitForRequest((r) => r.method() === 'PATCH' && r.url().endsWith(`/v1/employees/${org.ada}`)),
          page.keyboard.press('Enter'),
        ]);
        // Only what changed is sent.
        expect(sent.postDataJSON()).toEqual({ last_name: 'Lovelace-King' });
        await page.getByRole('heading', { level: 1, name: 'Ada Lovelace-King' }).waitFor();
        await page.getByText('Saved: last name.').waitFor();
        expect(await email.getAttribute('aria-invalid')).toBeNull();
        // Focus stays on the form's button.
        expect(await activeElement(page)).toMatchObject({ tag: 'BUTTON', text: 'Save changes' });
        expect((await employee(org.ada)).body.data).toMatchObject({ last_name: 'Lovelace-King', email: stored });
      });

      it('sets a new bank account with the keyboard, and shows it masked only', async () => {
        const routing = page.getByLabel('Routing number');
        const number = page.getByLabel('Account number');
        await routing.fill('021000022');
        await number.fill(NEW_ACCOUNT);
        await page.getByRole('button', { name: 'Save bank account' }).click();
        await page.locator('#bank-routing-error').waitFor();
        expect(await routing.getAttribute('aria-invalid')).toBe('true');
        expect(await routing.getAttribute('aria-describedby')).toBe('bank-routing-hint bank-routing-error');

        await routing.fill('021000021');
        await page.getByLabel('Account type').selectOption('checking');
        await tabTo(page, 'Save bank account');
        await page.keyboard.press('Space');
        const account = page.getByTestId('bank-account');
        await account.getByText('checking ••••2233 · routing 021000021').waitFor();
        expect(await account.locator('.badge').textContent()).toBe('active');
        expect(await page.getByTestId('bank-account-invalid').count()).toBe(0);
        await page.getByText('New bank account set: checking ••••2233 · routing 021000021.').waitFor();
        // The full number left the input, and is nowhere in the page.
        expect(await number.inputValue()).toBe('');
        expect(await routing.getAttribute('aria-invalid')).toBeNull();
        await expectNoFullAccountNumber(page);
        expect((await employee(org.ada)).body.data.bank_account).toMatchObject({
          account_number_last4: '2233',
          account_type: 'checking',
          status: 'active',
          status_reason: null,
        });
      });

      it('shows the paystub history with year-to-date totals', async () => {
        const stubs = (await stack.request('GET', `/v1/paystubs?employee_id=${org.ada}`, { token: org.token })).body
          .data.paystubs as Stub[];
        expect(stubs).toHaveLength(2);
        // Newest first; year to date adds up.
        expect(stubs[0]!.pay_date).toBe('2026-11-03');
        expect(stubs[0]!.year_to_date.net_pay).toBeCloseTo(stubs[0]!.net_pay + stubs[1]!.net_pay, 2);
        expect(stubs[1]!.year_to_date.net_pay).toBe(stubs[1]!.net_pay);

        const rows = page.getByTestId('employee-paystubs').locator('tbody tr');
        expect(await rows.count()).toBe(2);
        for (const [i, stub] of stubs.entries()) {
          const row = rows.nth(i);
          expect(await row.getAttribute('data-paystub-id')).toBe(stub.paystub_id);
          expect(await row.locator('td[data-label="Net"]').textContent()).toContain(money(stub.net_pay));
          expect(await row.getByTestId('ytd-net').textContent()).toBe(money(stub.year_to_date.net_pay));
          expect(await row.getByTestId('ytd-gross').textContent()).toBe(money(stub.year_to_date.gross_pay));
          expect(await row.getByTestId('ytd-net').isVisible()).toBe(true);
        }
        expect(await rows.first().locator('td[data-label="Pay date"]').textContent()).toBe('Nov 3, 2026');
        // The deposit the bank returned says so, by its last 4 digits only.
        const deposit = (await rows.first().locator('td[data-label="Deposit"]').textContent()) ?? '';
        expect(deposit).toContain('savings ••0101');
        expect(deposit).toContain('returned');
        expect(deposit).toContain('R03');
        await axe();
        if (phone) {
          await expectNoSidewaysScroll(page);
          await shoot(page, 'employee-phone');
        } else {
          await shoot(page, 'employee');
        }
      });

      it('shows an account the bank corrected by a notification of change, with its date', async () => {
        await nav(page, 'Employees').click();
        await page.getByRole('link', { name: 'Grace Hopper' }).click();
        await page.getByRole('heading', { level: 1, name: 'Grace Hopper' }).waitFor();
        const stored = (await employee(org.grace)).body.data.bank_account;
        expect(stored).toMatchObject({ account_number_last4: '4321', status: 'active' });
        expect(stored.corrected_at).toEqual(expect.any(String));
        const account = page.getByTestId('bank-account');
        expect(await account.textContent()).toContain('checking ••••4321 · routing 021000021');
        expect(await account.locator('.badge').textContent()).toBe('active');
        const corrected = page.getByTestId('bank-account-corrected');
        expect(await corrected.textContent()).toContain('Corrected by the bank’s notification of change');
        expect(await corrected.locator('time').getAttribute('datetime')).toBe(stored.corrected_at);
        await expectNoFullAccountNumber(page);
      });

      it('removes an employee only after the confirmation, with the keyboard', async () => {
        const before = dialogs.length;
        answer = 'dismiss';
        await page.getByRole('heading', { level: 1, name: 'Grace Hopper' }).focus();
        await tabTo(page, 'Remove employee');
        await page.keyboard.press('Enter');
        await expect.poll(() => dialogs.length).toBe(before + 1);
        expect(dialogs[before]).toMatch(/^Remove Grace Hopper\? They can no longer be paid/);
        // Not confirmed: nothing changed.
        expect((await employee(org.grace)).status).toBe(200);
        expect(await page.getByTestId('employee-removed').count()).toBe(0);

        answer = 'accept';
        expect(await activeElement(page)).toMatchObject({ tag: 'BUTTON', text: 'Remove employee' });
        await page.keyboard.press('Enter');
        const removed = page.getByTestId('employee-removed');
        await removed.waitFor();
        expect(await removed.textContent()).toContain('Grace Hopper was removed.');
        // Focus moves to what happened, the button being gone.
        expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('employee-removed');
        expect((await employee(org.grace)).status).toBe(404);
        // Her paystubs stay readable.
        expect(await page.getByTestId('employee-paystubs').locator('tbody tr').count()).toBe(2);
        await axe();

        await removed.getByRole('link', { name: 'Back to Employees' }).click();
        await page.getByRole('heading', { level: 1, name: 'Employees' }).waitFor();
        await page.getByTestId('employee-table').waitFor();
        expect(await page.getByTestId('employee-table').getByText('Grace Hopper').count()).toBe(0);
      });

      it('shows a name made of HTML as text, on the list and on the employee page', async () => {
        const name = `${HTML_FIRST} ${HTML_LAST}`;
        const link = page.getByTestId('employee-table').getByRole('link', { name });
        await link.waitFor();
        expect(await link.textContent()).toBe(name);
        await link.click();
        await page.getByRole('heading', { level: 1, name }).waitFor();
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(name);
        expect(await page.getByLabel('First name').inputValue()).toBe(HTML_FIRST);
        await page.getByTestId('employee-paystubs').waitFor();
        // No element was made from the name, and nothing it carries ran.
        expect(await page.locator('main img, main b').count()).toBe(0);
        expect(dialogs.filter((d) => !d.startsWith('Remove '))).toEqual([]);
        await expectNoFullAccountNumber(page);
        await axe();
        if (phone) await expectNoSidewaysScroll(page);
      });

      it('kept the token in session storage only, and nothing broke the Content Security Policy', async () => {
        const storage = await page.evaluate(() => ({
          session: sessionStorage.getItem('payroll-dashboard.token'),
          local: localStorage.length,
          cookie: document.cookie,
        }));
        expect(storage).toEqual({ session: org.token, local: 0, cookie: '' });
        expect(await context.cookies()).toEqual([]);
        expect(cspReports).toEqual([]);
      });
    });
  }
});
