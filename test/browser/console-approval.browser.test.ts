import type { Browser, BrowserContext, Page } from 'playwright-core';
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
 * Payroll approval in the console (CONTRACT §11): an organization that requires it, runs submitted through the API
 * with one admin key and approved in the console with another (dual control: the submitting key is refused with the
 * API's message), what will move shown before anything does (the debit and its account, the dates, approve-by and
 * the time left, the people paid), blockers by person, a refusal for each reason, cancelling a run that awaits
 * approval, the runs list filtered by status, and the approval and retention settings.
 */
let stack: RunningStack;
let browser: Browser;
let base: string;
/** The organization's own admin token: it submits every run. */
let submitter: string;
/** A second admin key of the same organization: the approver. */
let approver: string;
let approverKeyId: string;
const ids: Record<string, string> = {};
const runs: Record<'approve' | 'blocked' | 'raced', { id: string; net: number }> = {
  approve: { id: '', net: 0 },
  blocked: { id: '', net: 0 },
  raced: { id: '', net: 0 },
};
let paid = '';

const FUNDING_ACCOUNT = '4400123456789';
const PEOPLE = [
  ['Ada', 'Lovelace'],
  ['Grace', 'Hopper'],
  ['Katherine', 'Johnson'],
  ['Mallory', 'Leaving'],
] as const;

const money = (n: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(n);
const newYork = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/New_York',
  dateStyle: 'medium',
  timeStyle: 'short',
});

/** A calendar date `days` from today (UTC): the runs awaiting approval are due ahead, so their deadline is too. */
const daysAhead = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

const entry = (id: string, gross: number) => ({
  employee_id: id,
  gross_pay: gross.toFixed(2),
  hours_worked: 80,
  deductions: { taxes: (gross * 0.2).toFixed(2) },
});

async function submit(body: Record<string, unknown>): Promise<{ id: string; net: number; status: string }> {
  const res = await stack.request('POST', '/v1/payroll', { token: submitter, body });
  expect(res.status, res.text).toBe(202);
  return { id: res.body.data.payroll_id, net: res.body.data.totals.net_pay, status: res.body.data.status };
}

async function statusOf(id: string): Promise<string> {
  return (await stack.request('GET', `/v1/payroll/${id}`, { token: submitter })).body.data.status;
}

/** A page signed in with `token`, on the run `id`, once its approval section has drawn. */
async function openRun(p: Page, id: string): Promise<void> {
  await p.goto(`${base}/dashboard/#/payrolls/${id}`);
  await p.getByRole('heading', { level: 1, name: 'Payroll run' }).waitFor();
  await p.getByTestId('run-status').waitFor();
}

/** The page has drawn everything it loads: no "Loading…" left in it. */
async function settled(p: Page): Promise<void> {
  await p.waitForFunction(() => !/Loading/.test(document.querySelector('main')?.textContent ?? ''), undefined, {
    timeout: 15_000,
  });
}

describe.skipIf(!hasChromium)('payroll approval in the dashboard', () => {
  let asSubmitter: { context: BrowserContext; page: Page };
  let asApprover: { context: BrowserContext; page: Page };

  beforeAll(async () => {
    stack = await startLocalStack();
    base = `https://localhost:${stack.state.https_port}`;
    ({ token: submitter } = await stack.createOrganization('Halyard Freight'));
    const key = await stack.request('POST', '/v1/api-keys', {
      token: submitter,
      body: { name: 'Second approver', type: 'admin' },
    });
    expect(key.status, key.text).toBe(201);
    approver = key.body.data.token;
    approverKeyId = key.body.data.api_key_id;
    const funding = await stack.request('PATCH', '/v1/settings', {
      token: submitter,
      body: {
        funding_account: { routing_number: '021000021', account_number: FUNDING_ACCOUNT, account_type: 'checking' },
      },
    });
    expect(funding.status, funding.text).toBe(200);
    for (const [i, [first, last]] of PEOPLE.entries()) ids[first] = await hire(stack, submitter, i, first, last);

    // A run paid before approval was required: everyone has a paystub, which keeps a name once its employee is gone.
    const before = await submit({
      pay_period_start: '2026-10-01',
      pay_period_end: '2026-10-14',
      pay_date: '2026-10-16',
      employees: PEOPLE.map(([first], i) => entry(ids[first]!, 2000 + 100 * i)),
    });
    expect(before.status).toBe('pending');
    paid = before.id;
    await vi.waitFor(async () => expect(await statusOf(paid)).toBe('completed'), { timeout: 30_000, interval: 200 });

    const required = await stack.request('PATCH', '/v1/settings', {
      token: submitter,
      body: { payroll_approval: 'required' },
    });
    expect(required.status, required.text).toBe(200);
    expect(required.body.data.payroll_approval).toBe('required');

    const start = daysAhead(7);
    const end = daysAhead(20);
    for (const [name, body] of [
      [
        'approve',
        {
          pay_period_start: start,
          pay_period_end: end,
          pay_date: daysAhead(24),
          employees: [entry(ids.Ada!, 3200), entry(ids.Grace!, 2900), entry(ids.Katherine!, 3050)],
        },
      ],
      [
        'blocked',
        {
          type: 'off_cycle',
          pay_period_start: start,
          pay_period_end: end,
          pay_date: daysAhead(25),
          employees: [entry(ids.Ada!, 400), entry(ids.Mallory!, 500)],
        },
      ],
      [
        'raced',
        {
          type: 'off_cycle',
          pay_period_start: start,
          pay_period_end: end,
          pay_date: daysAhead(26),
          employees: [entry(ids.Grace!, 300)],
        },
      ],
    ] as const) {
      const run = await submit(body);
      expect(run.status).toBe('awaiting_approval');
      runs[name] = run;
    }
    browser = await launchChromium();
    asSubmitter = await newPage(browser, base, LAPTOP);
    asApprover = await newPage(browser, base, LAPTOP);
    await signIn(asSubmitter.page, base, submitter);
    await signIn(asApprover.page, base, approver);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('lists the runs awaiting approval apart, with their approve-by, and filters by any status by its label', async () => {
    const page = asApprover.page;
    await nav(page, 'Payrolls').click();
    const table = page.getByTestId('payroll-table');
    await table.locator(`tr[data-payroll-id="${runs.raced.id}"]`).waitFor();
    await page.getByTestId('awaiting-count').getByText('Awaiting approval: 3 runs below.').waitFor();
    for (const { id } of Object.values(runs)) {
      const row = table.locator(`tr[data-payroll-id="${id}"]`);
      expect(await row.getAttribute('class')).toContain('runs-awaiting');
      expect(await row.locator('td[data-label="Status"] .badge').textContent()).toBe('Awaiting approval');
      expect(await row.getByTestId('approve-by').textContent()).toMatch(
        /^Approve by .+ \(in \d+ days?( \d+ hours?)?\)$/,
      );
      expect(await row.getByTestId('net-pay').textContent()).toContain('to pay once approved');
    }
    // The completed run carries the lifecycle's label for it.
    expect(await table.locator(`tr[data-payroll-id="${paid}"] td[data-label="Status"] .badge`).textContent()).toBe(
      'Processed',
    );

    // The filter offers every status of the lifecycle, by its label.
    const select = page.getByLabel('Status');
    expect(await select.locator('option').allTextContents()).toEqual([
      'Any status',
      'Awaiting approval',
      'Pending',
      'Processing',
      'Processed',
      'Rejected',
      'Failed',
      'Cancelled',
    ]);
    const [listed] = await Promise.all([
      page.waitForRequest((r) => r.url().includes('/v1/payroll?') && r.url().includes('status=awaiting_approval')),
      (async () => {
        await select.selectOption({ label: 'Awaiting approval' });
        await page.getByRole('button', { name: 'Apply filters' }).click();
      })(),
    ]);
    expect(new URL(listed.url()).searchParams.get('status')).toBe('awaiting_approval');
    await vi.waitFor(async () => expect(await table.locator('tbody tr').count()).toBe(3), { timeout: 10_000 });
    const shown = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-status')));
    expect(shown).toEqual(['awaiting_approval', 'awaiting_approval', 'awaiting_approval']);
    expect(await table.locator(`tr[data-payroll-id="${paid}"]`).count()).toBe(0);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'payrolls-awaiting-approval');

    // Processed only: the run paid before approval was required.
    await select.selectOption({ label: 'Processed' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await vi.waitFor(
      async () =>
        expect(
          await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-payroll-id'))),
        ).toEqual([paid]),
      { timeout: 10_000 },
    );
  });

  it('refuses the approval of the key that submitted the run, with the API’s message in an alert', async () => {
    const page = asSubmitter.page;
    await openRun(page, runs.approve.id);
    const approve = page.getByRole('button', { name: 'Approve this run' });
    await approve.click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('The approver must not be the submitter');
    expect(await alert.textContent()).toContain('403 approver_is_submitter');
    // Nothing moved: still awaiting approval, and the page still offers the approval.
    expect(await statusOf(runs.approve.id)).toBe('awaiting_approval');
    expect(await page.getByTestId('run-status').textContent()).toContain('Awaiting approval');
    expect(await approve.isEnabled()).toBe(true);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'payroll-approval-refused');
  });

  it('shows a second admin what will move, then approves: the page follows the run until it is processed', async () => {
    const page = asApprover.page;
    await openRun(page, runs.approve.id);
    await settled(page);
    const run = (await stack.request('GET', `/v1/payroll/${runs.approve.id}`, { token: approver })).body.data;
    expect(run.blockers).toEqual([]);

    const moving = page.getByTestId('will-move');
    expect(await page.getByTestId('debit-total').textContent()).toBe(money(runs.approve.net));
    expect(await page.getByTestId('debit-account').textContent()).toBe('from the funding account checking ••••6789');
    expect(await moving.getByTestId('effective-entry-date').textContent()).toMatch(/^\w{3} \d{1,2}, \d{4}$/);
    expect(await moving.getByTestId('release-by').textContent()).toMatch(/^\w{3} \d{1,2}, \d{4}$/);
    expect(await moving.getByTestId('approve-by').textContent()).toMatch(
      new RegExp(
        `^${newYork.format(new Date(run.approve_by)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} New York time \\(in \\d+ days?( \\d+ hours?)?\\)$`,
      ),
    );
    const people = await page
      .getByTestId('run-employees')
      .getByRole('link')
      .evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
    expect(people).toEqual(
      (['Ada', 'Grace', 'Katherine'] as const).map((first) => [
        `${first} ${PEOPLE.find(([f]) => f === first)![1]}`,
        `#/employees/${ids[first]}`,
      ]),
    );
    // Each person's net pay as accepted, beside the run's total: every amount is seen before money moves.
    expect(await page.getByTestId('per-employee-note').textContent()).toContain(money(runs.approve.net));
    const amounts = await page.getByTestId('employee-net-pay').allTextContents();
    expect(amounts.map((a) => a.trim())).toEqual(
      (run.net_pay_by_employee as { net_pay: number }[]).map((p) => money(p.net_pay)),
    );
    expect(await page.getByTestId('no-blockers').textContent()).toBe('Nothing blocks this run: it can be approved.');
    expect(await page.getByTestId('blockers').count()).toBe(0);
    // Nothing exists yet to be paid: no file, no paystubs.
    expect(await page.getByTestId('disbursement').textContent()).toContain('nothing moves until the run is approved');
    expect(await page.getByTestId('paystub-table').count()).toBe(0);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'payroll-awaiting-approval', true);

    await page.getByRole('button', { name: 'Approve this run' }).click();
    await page.getByTestId('approved').waitFor();
    await page.getByTestId('run-status').getByText('This run is processed.').waitFor({ timeout: 30_000 });
    expect(await page.locator('.run-status .badge').textContent()).toBe('Processed');
    expect(await page.getByTestId('approval').count()).toBe(0);
    expect(await page.getByTestId('approved-by').textContent()).toContain(approverKeyId);
    await page.getByTestId('paystub-table').waitFor();
    expect(await page.getByTestId('paystub-table').locator('tbody tr').count()).toBe(3);
    const after = (await stack.request('GET', `/v1/payroll/${runs.approve.id}`, { token: approver })).body.data;
    expect(after.status).toBe('completed');
    expect(after.approved_by.api_key_id).toBe(approverKeyId);
    // The history names each step by its label.
    const history = await page.locator('.timeline .badge').allTextContents();
    expect(history).toEqual(['Awaiting approval', 'Pending', 'Processing', 'Processed']);
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('names the person a blocker is about, answers Approve with the blocker, and cancels the run', async () => {
    const removed = await stack.request('DELETE', `/v1/employees/${ids.Mallory}`, { token: submitter });
    expect(removed.status, removed.text).toBe(200);
    const page = asApprover.page;
    await openRun(page, runs.blocked.id);
    const blockers = page.getByTestId('blockers');
    await blockers.waitFor();
    await settled(page);
    const person = blockers.locator(`li[data-employee-id="${ids.Mallory}"]`);
    const link = person.getByRole('link', { name: 'Mallory Leaving' });
    expect(await link.getAttribute('href')).toBe(`#/employees/${ids.Mallory}`);
    expect(await person.textContent()).toContain('employee_not_found');
    expect(await blockers.locator('li.runs-blocker-group').count()).toBe(1);
    // Still listed among the people paid, with the amount the run holds for them, marked removed; Ada is not blocked.
    expect(
      await page.getByTestId('run-employees').locator(`li[data-employee-id="${ids.Mallory}"]`).textContent(),
    ).toMatch(/^Mallory Leaving \$[\d,]+\.\d{2}removed$/);
    expect(await seriousAxeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Approve this run' }).click();
    const refused = page.getByTestId('approval-refused');
    await refused.waitFor();
    expect(await refused.getAttribute('role')).toBe('alert');
    expect(await refused.textContent()).toContain('Payroll is blocked');
    expect(await refused.textContent()).toContain('422 payroll_blocked');
    const listed = refused.getByTestId('refused-blockers');
    await listed.getByRole('link', { name: 'Mallory Leaving' }).waitFor();
    expect(await listed.textContent()).toContain('employee_not_found');
    expect(await statusOf(runs.blocked.id)).toBe('awaiting_approval');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'payroll-blocked', true);

    // A run awaiting approval moved nothing: it may be cancelled (in every environment).
    const approval = page.getByTestId('approval');
    expect(await approval.getByRole('heading', { name: 'Or cancel it' }).count()).toBe(1);
    await approval.getByRole('button', { name: 'Cancel this run…' }).click();
    await page.getByRole('alertdialog').getByText('It moved nothing').waitFor();
    await page.getByRole('button', { name: 'Yes, cancel the run' }).click();
    await page.getByTestId('run-status').getByText('This run is cancelled.').waitFor();
    expect(await page.getByTestId('approval').count()).toBe(0);
    expect(await statusOf(runs.blocked.id)).toBe('cancelled');
  });

  it('says a run approved meanwhile is no longer awaiting approval (409), and follows it', async () => {
    const page = asApprover.page;
    await openRun(page, runs.raced.id);
    await page.getByTestId('no-blockers').waitFor();
    // Approved elsewhere while this page shows it awaiting approval.
    const elsewhere = await stack.request('POST', `/v1/payroll/${runs.raced.id}/approve`, { token: approver });
    expect(elsewhere.status, elsewhere.text).toBe(200);
    await page.getByRole('button', { name: 'Approve this run' }).click();
    const refused = page.getByTestId('approval-refused');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('409 payroll_not_awaiting_approval');
    expect(await refused.getByTestId('not-awaiting').textContent()).toContain(
      'This run is no longer awaiting approval',
    );
    // The section is gone with the status; focus is on the refusal, not lost.
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'approval-refused');
    await page.getByTestId('run-status').getByText('This run is processed.').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('approval').count()).toBe(0);
  });

  it('edits the approval settings and the file retention, with the API’s field errors next to their fields', async () => {
    const page = asApprover.page;
    await nav(page, 'Settings').click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const mode = page.getByLabel('Approval of each run');
    const cutoff = page.getByLabel('Approval cut-off time');
    const retention = page.getByLabel('File retention (days)');
    await mode.waitFor();
    expect(await mode.inputValue()).toBe('required');
    expect(await cutoff.inputValue()).toBe('15:00');
    expect(await retention.inputValue()).toBe('730');

    await cutoff.fill('25:00');
    await page.getByRole('button', { name: 'Save approval settings' }).click();
    const cutoffError = page.locator('#settings-approval-cutoff-time-error');
    await cutoffError.waitFor();
    expect(await cutoffError.textContent()).toContain('HH:MM');
    expect(await cutoff.getAttribute('aria-invalid')).toBe('true');
    expect(await cutoff.getAttribute('aria-describedby')).toBe(
      'settings-approval-cutoff-time-hint settings-approval-cutoff-time-error',
    );

    await retention.fill('100');
    await page.getByRole('button', { name: 'Save file retention' }).click();
    const retentionError = page.locator('#settings-file-retention-days-error');
    await retentionError.waitFor();
    expect(await retentionError.textContent()).toContain('At least 730 days');
    expect(await retention.getAttribute('aria-invalid')).toBe('true');
    expect(await seriousAxeViolations(page)).toEqual([]);

    await cutoff.fill('14:30');
    await mode.selectOption('automatic');
    await page.getByRole('button', { name: 'Save approval settings' }).click();
    await page.getByText('Saved: payroll approval, approval cut-off time.').waitFor();
    await retention.fill('1095');
    await page.getByRole('button', { name: 'Save file retention' }).click();
    await page.getByText('Saved: file retention.').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    const stored = (await stack.request('GET', '/v1/settings', { token: approver })).body.data;
    expect(stored).toMatchObject({
      payroll_approval: 'automatic',
      approval_cutoff_time: '14:30',
      file_retention_days: 1095,
    });
    expect(await page.getByTestId('approval-now').textContent()).toContain('Now automatic');
    await shoot(page, 'settings-approval');
  });

  it('fits a phone: the list of runs awaiting approval and a run’s approval, without sideways scrolling', async () => {
    await stack.request('PATCH', '/v1/settings', { token: submitter, body: { payroll_approval: 'required' } });
    const run = await submit({
      type: 'off_cycle',
      pay_period_start: daysAhead(7),
      pay_period_end: daysAhead(20),
      pay_date: daysAhead(27),
      employees: [entry(ids.Ada!, 250), entry(ids.Katherine!, 260)],
    });
    expect(run.status).toBe('awaiting_approval');
    const phone = await newPage(browser, base, PHONE, 2);
    try {
      await signIn(phone.page, base, approver);
      await phone.page.locator(`tr[data-payroll-id="${run.id}"]`).getByTestId('approve-by').waitFor();
      expect(await overflowing(phone.page)).toEqual([]);
      expect(await seriousAxeViolations(phone.page)).toEqual([]);
      await openRun(phone.page, run.id);
      await phone.page.getByTestId('no-blockers').waitFor();
      await settled(phone.page);
      expect(await overflowing(phone.page)).toEqual([]);
      expect(await seriousAxeViolations(phone.page)).toEqual([]);
    } finally {
      await phone.context.close();
    }
  });
});
