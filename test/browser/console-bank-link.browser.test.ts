import { createHash } from 'node:crypto';
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
  signIn,
} from './support.js';

/**
 * The bank link in the console: Settings → Bank link set through its form (the API's problems shown next to their
 * fields, the password write-only and never shown again), its status ("configured, not yet checked": the organization
 * is made without the sandbox bank's link, and the host it is given never answers), the Inbound bank files page
 * (empty), and the link removed after a confirmation; then the connection test of an organization linked to the local
 * stack's sandbox bank (both directories listed; a wrong pinned key explained). Each page checked by axe-core and for
 * sideways scrolling on a phone.
 */
let stack: RunningStack;
let browser: Browser;
let base: string;
let token: string;

const PASSWORD = 'correct horse battery staple 7';
/** A host key fingerprint as `ssh-keygen -lf` prints it: SHA256 and 43 characters of unpadded base64. */
const FINGERPRINT = `SHA256:${createHash('sha256').update('the bank’s host key').digest('base64').replace(/=+$/, '')}`;

const storedLink = async () =>
  (await stack.request('GET', '/v1/settings', { token })).body.data.bank_link as Record<string, unknown> | null;

/** The page has drawn everything it loads: no "Loading…" or "Reading…" left in it. */
async function settled(p: Page): Promise<void> {
  await p.waitForFunction(() => !/Loading|Reading/.test(document.querySelector('main')?.textContent ?? ''), undefined, {
    timeout: 15_000,
  });
}

/** Every value the page holds, shown or typed: its text and each field's value. */
const everything = (p: Page) =>
  p.evaluate(
    () =>
      `${document.body.textContent}\n${[...document.querySelectorAll('input, textarea')].map((el) => (el as HTMLInputElement).value).join('\n')}`,
  );

describe.skipIf(!hasChromium)('the bank link in the dashboard', () => {
  let admin: { context: BrowserContext; page: Page };
  const dialogs: string[] = [];

  beforeAll(async () => {
    stack = await startLocalStack();
    base = `https://localhost:${stack.state.https_port}`;
    // Without the link to the sandbox bank the admin CLI gives a sandbox organization: this one sets its own.
    const created = await stack.admin('org', 'create', '--name', 'Fjord Freight', '--without-bank-link', '--json');
    ({ token } = JSON.parse(created.stdout) as { token: string });
    browser = await launchChromium();
    admin = await newPage(browser, base, LAPTOP);
    // newPage accepts every dialog; this only records what each asked.
    admin.page.on('dialog', (d) => dialogs.push(d.message()));
    await signIn(admin.page, base, token);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('shows no link in Settings at first: files are sent by hand', async () => {
    const page = admin.page;
    await nav(page, 'Settings').click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const card = page.getByTestId('bank-link-card');
    await card.getByRole('heading', { level: 2, name: 'Bank link' }).waitFor();
    await settled(page);
    expect(await card.getByTestId('bank-link-none').textContent()).toBe('Not set: files are sent to the bank by hand.');
    expect(await card.getByTestId('bank-link-status').textContent()).toContain('not set');
    expect(await card.getByRole('button', { name: 'Remove link' }).count()).toBe(0);
    expect(await card.getByRole('heading', { name: 'Set up the bank link' }).count()).toBe(1);
    // The password field is empty, write-only, and says it is never shown again.
    const password = card.getByLabel('Password', { exact: true });
    expect(await password.getAttribute('type')).toBe('password');
    expect(await password.inputValue()).toBe('');
    const hint = await page.locator(`#${await password.getAttribute('aria-describedby')}`).textContent();
    expect(hint).toMatch(/never shown again/);
    expect(await card.getByLabel('Port').inputValue()).toBe('22');
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('shows the API’s problems next to their fields, then saves a valid link, shown without its password', async () => {
    const page = admin.page;
    const card = page.getByTestId('bank-link-card');
    const field = (label: string) => card.getByLabel(label, { exact: true });
    await field('Host').fill('sftp.fjord-bank.example');
    await field('Port').fill('2222');
    await field('User name').fill('fjord.payroll');
    await field('Upload directory').fill('/inbound/ach');
    await field('Pick-up directory').fill('/outbound');
    await field('Host key fingerprint').fill('SHA256:not-a-fingerprint');
    await field('Cut-off time').fill('14:30');
    await field('Password').fill(PASSWORD);

    // A malformed fingerprint: the API's 400, its message beside the field, which is marked invalid.
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith('/v1/settings')),
      card.getByRole('button', { name: 'Save bank link' }).click(),
    ]);
    expect(refused.status()).toBe(400);
    expect(refused.request().postDataJSON()).toEqual({
      bank_link: {
        host: 'sftp.fjord-bank.example',
        port: 2222,
        username: 'fjord.payroll',
        remote_inbound_dir: '/inbound/ach',
        remote_outbound_dir: '/outbound',
        host_key_fingerprint: 'SHA256:not-a-fingerprint',
        cutoff_time: '14:30',
        password: PASSWORD,
      },
    });
    const fingerprint = field('Host key fingerprint');
    const error = card.locator('#bank-link-host-key-fingerprint-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/SHA256/);
    expect(await fingerprint.getAttribute('aria-invalid')).toBe('true');
    expect(await fingerprint.getAttribute('aria-describedby')).toContain('bank-link-host-key-fingerprint-error');
    expect(await card.getByRole('alert').textContent()).toContain('The bank link was not changed');
    expect(await card.getByRole('alert').textContent()).toContain('bank_link.host_key_fingerprint');
    expect(await storedLink()).toBeNull();
    expect(await seriousAxeViolations(page)).toEqual([]);

    // A password is given each time: left out, the API says so beside the password field.
    await fingerprint.fill(FINGERPRINT);
    await field('Password').fill('');
    await card.getByRole('button', { name: 'Save bank link' }).click();
    const secretError = card.locator('#bank-link-password-error');
    await secretError.waitFor();
    expect(await secretError.textContent()).toMatch(/exactly one/i);
    expect(await field('Password').getAttribute('aria-invalid')).toBe('true');
    expect(await card.locator('#bank-link-host-key-fingerprint-error').count()).toBe(0);
    expect(await storedLink()).toBeNull();

    // Valid: saved, then shown as stored, the password nowhere on the page, and the form empty of it.
    await field('Password').fill(PASSWORD);
    await card.getByRole('button', { name: 'Save bank link' }).click();
    await page.getByRole('status').getByText('Bank link saved: sftp.fjord-bank.example:2222').waitFor();
    const current = card.getByTestId('bank-link-current');
    await current.waitFor();
    const shown = await current.textContent();
    for (const part of [
      'sftp.fjord-bank.example:2222',
      'fjord.payroll',
      '/inbound/ach',
      '/outbound',
      FINGERPRINT,
      '14:30 New York time',
      'A password, kept encrypted and never shown',
    ])
      expect(shown).toContain(part);
    expect(await field('Password').inputValue()).toBe('');
    expect(await everything(page)).not.toContain(PASSWORD);
    expect(await card.getByRole('heading', { name: 'Change the bank link' }).count()).toBe(1);
    expect(await field('Host key fingerprint').inputValue()).toBe(FINGERPRINT);

    const stored = await storedLink();
    expect(stored).toEqual({
      host: 'sftp.fjord-bank.example',
      port: 2222,
      username: 'fjord.payroll',
      remote_inbound_dir: '/inbound/ach',
      remote_outbound_dir: '/outbound',
      host_key_fingerprint: FINGERPRINT,
      cutoff_time: '14:30',
      credential: 'password',
      pgp_public_key: null,
      pgp_key_fingerprint: null,
    });

    // Configured, not yet checked: the local stack runs no bank link worker.
    await card.getByTestId('bank-link-status').getByText('configured, not yet checked').waitFor();
    const status = (await stack.request('GET', '/v1/bank-link', { token })).body.data;
    expect(status).toEqual({ configured: true, state: null, reason: null, checked_at: null });
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('shows the Inbound bank files page, next to Files in the navigation, empty while nothing was picked up', async () => {
    const page = admin.page;
    await nav(page, 'From the bank').click();
    await page.getByRole('heading', { level: 1, name: 'Inbound bank files' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/bank-files');
    expect(await nav(page, 'From the bank').getAttribute('aria-current')).toBe('page');
    // The title follows the page once it is drawn.
    await page.waitForFunction(() => document.title === 'From the bank · Payroll dashboard');
    // Listed right after Files.
    const links = await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link')
      .evaluateAll((els) => els.map((el) => el.textContent));
    expect(links.indexOf('From the bank')).toBe(links.indexOf('Files') + 1);
    await settled(page);
    expect(await page.getByTestId('inbound-empty').textContent()).toMatch(/^Nothing picked up yet/);
    expect(await page.getByTestId('bank-link-status').textContent()).toContain('configured, not yet checked');
    expect(await page.getByTestId('inbound-table').count()).toBe(0);
    const listed = await stack.request('GET', '/v1/bank-link/inbound-files', { token });
    expect(listed.body.data).toEqual({ inbound_files: [], next_page_token: null });
    expect(await seriousAxeViolations(page)).toEqual([]);
    expect(await overflowing(page)).toEqual([]);
  });

  it('fits a phone: the settings card and the inbound files page', async () => {
    const phone = await newPage(browser, base, PHONE, 3);
    try {
      await signIn(phone.page, base, token);
      for (const route of ['#/settings', '#/bank-files']) {
        await phone.page.goto(`${base}/dashboard/${route}`);
        await phone.page.locator('h1').waitFor();
        await settled(phone.page);
        expect(await overflowing(phone.page), route).toEqual([]);
        expect(await seriousAxeViolations(phone.page), route).toEqual([]);
      }
    } finally {
      await phone.context.close();
    }
  });

  it('opens one file by its id (where an acknowledgement links to): a ready file, not transmitted, not late', async () => {
    const employee = await hire(stack, token, 1, 'Ada', 'Lovelace');
    const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
    const submitted = await stack.request('POST', '/v1/payroll', {
      token,
      body: {
        type: 'off_cycle',
        pay_period_start: day(-9),
        pay_period_end: day(5),
        pay_date: day(10),
        employees: [{ employee_id: employee, gross_pay: '2000.00', hours_worked: 80, deductions: { taxes: '400.00' } }],
      },
    });
    expect(submitted.status, submitted.text).toBe(202);
    const runId = submitted.body.data.payroll_id as string;
    const run = async () => (await stack.request('GET', `/v1/payroll/${runId}`, { token })).body.data;
    await vi.waitFor(async () => expect((await run()).status).toBe('completed'), { timeout: 30_000, interval: 200 });
    const fileId = (await run()).disbursement.file_id as string;

    const page = admin.page;
    await page.goto(`${base}/dashboard/#/files?file_id=${fileId}`);
    const row = page.getByTestId('files-table').locator(`tr[data-file-id="${fileId}"]`);
    await row.waitFor();
    expect(await page.getByTestId('files-table').locator('tbody tr').count()).toBe(1);
    expect(await row.getAttribute('data-status')).toBe('ready');
    expect(await row.locator('.badge').allTextContents()).toEqual(['ready to send']);
    expect(await row.getByTestId('transmission').textContent()).toBe('');
    expect(await page.getByTestId('file-one').textContent()).toContain(fileId);
    // Found by name as the other pages' tests find it: no other link's name holds "Files".
    expect(await nav(page, 'Files').getAttribute('aria-current')).toBe('page');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.getByRole('link', { name: 'Show every file' }).click();
    await page.getByTestId('files-table').locator(`tr[data-file-id="${fileId}"]`).waitFor();
    expect(new URL(page.url()).hash).toBe('#/files');
  });

  it('removes the link after a confirmation: files are sent by hand again', async () => {
    const page = admin.page;
    await nav(page, 'Settings').click();
    const card = page.getByTestId('bank-link-card');
    await card.getByTestId('bank-link-current').waitFor();
    await settled(page);
    dialogs.length = 0;
    await card.getByRole('button', { name: 'Remove link' }).click();
    await card.getByTestId('bank-link-none').waitFor();
    expect(dialogs).toHaveLength(1);
    expect(dialogs[0]).toMatch(/^Remove the bank link\?/);
    await page.getByRole('status').getByText('Bank link removed: files are sent to the bank by hand.').waitFor();
    expect(await card.getByTestId('bank-link-current').count()).toBe(0);
    await card.getByTestId('bank-link-status').getByText('not set').waitFor();
    expect(await card.getByRole('heading', { name: 'Set up the bank link' }).count()).toBe(1);
    expect(await storedLink()).toBeNull();
    expect((await stack.request('GET', '/v1/bank-link', { token })).body.data.configured).toBe(false);
  });

  describe('the connection test, for an organization linked to the sandbox bank', () => {
    let linked: { organization_id: string; token: string };
    let page: Page;
    let fileId: string;

    beforeAll(async () => {
      linked = await stack.createOrganization('Harbour Haulage');
      // A run: the link is served at once (which opens the organization's account at the sandbox bank) and its file
      // is delivered to the upload directory, then acknowledged in the pick-up directory.
      const employee = await hire(stack, linked.token, 2, 'Grace', 'Hopper');
      const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
      const submitted = await stack.request('POST', '/v1/payroll', {
        token: linked.token,
        body: {
          type: 'off_cycle',
          pay_period_start: day(-9),
          pay_period_end: day(5),
          pay_date: day(10),
          employees: [{ employee_id: employee, gross_pay: '2100.00', hours_worked: 80 }],
        },
      });
      expect(submitted.status, submitted.text).toBe(202);
      const runId = submitted.body.data.payroll_id as string;
      fileId = await vi.waitFor(
        async () => {
          const files = await stack.request('GET', `/v1/disbursement-files?payroll_id=${runId}`, {
            token: linked.token,
          });
          const file = files.body.data.files[0] as { file_id: string; status: string } | undefined;
          if (file?.status !== 'acknowledged') throw new Error(`file: ${file?.status ?? 'none yet'}`);
          return file.file_id;
        },
        { timeout: 30_000, interval: 200 },
      );
      ({ page } = await newPage(browser, base, LAPTOP));
      await signIn(page, base, linked.token);
    });

    it('lists both directories after a busy state, the delivered file and its acknowledgement among them', async () => {
      await nav(page, 'Settings').click();
      const card = page.getByTestId('bank-link-card');
      await card.getByTestId('bank-link-current').waitFor();
      await settled(page);
      const button = card.getByRole('button', { name: 'Test connection' });
      const result = card.getByTestId('bank-link-test-result');
      expect(await result.getAttribute('aria-live')).toBe('polite');
      expect(await page.locator(`#${await button.getAttribute('aria-describedby')}`).textContent()).toMatch(
        /Nothing is sent/,
      );

      // Held back until the busy state is seen: the button says so and cannot be pressed twice.
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => {
        release = r;
      });
      await page.route('**/v1/bank-link/test', async (route) => {
        await held;
        await route.continue();
      });
      const answered = page.waitForResponse((r) => r.url().endsWith('/v1/bank-link/test'));
      await button.click();
      const busy = card.getByRole('button', { name: 'Testing…' });
      await busy.waitFor();
      expect(await busy.isDisabled()).toBe(true);
      expect(await result.getAttribute('aria-busy')).toBe('true');
      expect(await result.textContent()).toMatch(/Connecting to the bank’s server/);
      release();
      const response = await answered;
      await page.unroute('**/v1/bank-link/test');
      expect(response.request().method()).toBe('POST');
      expect(response.status()).toBe(200);

      await result.getByText('Signed in to', { exact: false }).waitFor();
      expect(await result.getAttribute('aria-busy')).toBe('false');
      expect(await card.getByRole('button', { name: 'Test connection' }).isEnabled()).toBe(true);
      const summary = await result.locator('p').first().textContent();
      expect(summary).toContain(`127.0.0.1:${stack.state.sandbox_bank.port}`);
      expect(summary).toContain('1 file in the upload directory, 1 file in the pick-up directory');
      expect(summary).toContain('Nothing was sent or picked up');
      const size = (await stack.request('GET', `/v1/disbursement-files/${fileId}`, { token: linked.token })).raw.length;
      const inbound = result.getByTestId('bank-link-test-inbound');
      expect(await inbound.getByRole('heading').textContent()).toBe('Upload directory /inbound');
      const sent = inbound.locator(`tr[data-name="${fileId}.ach"]`);
      expect(await sent.locator('td').allTextContents()).toEqual([
        `${fileId}.ach`,
        `${size.toLocaleString('en-US')} bytes`,
      ]);
      const outbound = result.getByTestId('bank-link-test-outbound');
      expect(await outbound.getByRole('heading').textContent()).toBe('Pick-up directory /outbound');
      await outbound.locator(`tr[data-name="${fileId}.ach.ack"]`).waitFor();
      expect(await seriousAxeViolations(page)).toEqual([]);
      // The listings fit a phone's width too.
      await page.setViewportSize(PHONE);
      expect(await overflowing(page)).toEqual([]);
      await page.setViewportSize(LAPTOP);
    });

    it('explains a host key mismatch: both fingerprints, and that nothing was sent', async () => {
      const wrong = `SHA256:${'C'.repeat(43)}`;
      const current = (await stack.request('GET', '/v1/settings', { token: linked.token })).body.data.bank_link;
      const changed = await stack.request('PATCH', '/v1/settings', {
        token: linked.token,
        body: {
          bank_link: {
            host: current.host,
            port: current.port,
            username: current.username,
            remote_inbound_dir: current.remote_inbound_dir,
            remote_outbound_dir: current.remote_outbound_dir,
            host_key_fingerprint: wrong,
            cutoff_time: current.cutoff_time,
            password: 'any password at all',
          },
        },
      });
      expect(changed.status, changed.text).toBe(200);
      await page.reload();
      const card = page.getByTestId('bank-link-card');
      await card.getByTestId('bank-link-current').waitFor();
      await settled(page);
      await card.getByRole('button', { name: 'Test connection' }).click();
      const result = card.getByTestId('bank-link-test-result');
      await result.getByText('host key mismatch').waitFor();
      const text = await result.textContent();
      expect(text).toMatch(/did not sign in and nothing was sent/);
      const fingerprints = result.getByTestId('bank-link-test-fingerprints');
      expect(await fingerprints.locator('dd').allTextContents()).toEqual([
        wrong,
        stack.state.sandbox_bank.host_key_fingerprint,
      ]);
      expect(await fingerprints.locator('dt').allTextContents()).toEqual(['Pinned in the link', 'Shown by the server']);
      expect(await result.getByTestId('bank-link-test-inbound').count()).toBe(0);
      expect(await seriousAxeViolations(page)).toEqual([]);
    });
  });
});
