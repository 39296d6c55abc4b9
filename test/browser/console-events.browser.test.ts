import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * The dashboard's events (Integrations → Events) in a real Chromium against a local stack: a test event sent from
 * the Webhooks page with the keyboard alone, opened on the events page with its payload and every attempt (status
 * and response time), redelivered; an event skipped while its endpoint was paused says why it was not delivered;
 * the API's 429 and 409 shown in plain words; laptop and phone sizes, each checked by axe-core.
 *
 * `UPDATE_SCREENSHOTS=1 npm run test:browser` also writes docs/screenshots/events.png and event-detail.png.
 */
let stack: RunningStack;
let browser: Browser;
let page: Page;
let token: string;
let base: string;
let employeeId: string;
const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
/** The test event sent from the Webhooks page, and the event skipped while its endpoint was paused. */
let testEventId: string;
let skippedEventId: string;

const NOT_DELIVERED = 'Not delivered: no active endpoint was subscribed when it happened';

const api = async (method: string, path: string, body?: unknown) => {
  const res = await stack.request(method, path, { token, body });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body.data;
};

let period = 0;
const payroll = () => {
  const start = new Date(Date.UTC(2026, 2, 1 + 14 * period++));
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return {
    pay_period_start: iso(start),
    pay_period_end: iso(new Date(start.getTime() + 13 * 86_400_000)),
    pay_date: iso(new Date(start.getTime() + 18 * 86_400_000)),
    employees: [{ employee_id: employeeId, gross_pay: 1000, hours_worked: 40 }],
  };
};

/** Presses Tab until the focused element is the one wanted (by its accessible label or text): keyboard only. */
async function tabTo(p: Page, wanted: RegExp, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await p.keyboard.press('Tab');
    const name = await p.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return el?.getAttribute('aria-label') || el?.textContent?.trim() || '';
    });
    if (wanted.test(name)) return;
  }
  throw new Error(`${wanted} was not reached with ${max} presses of Tab`);
}

const noSidewaysScroll = (p: Page) =>
  p.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

describe.skipIf(!hasChromium)('events in the developer dashboard', () => {
  beforeAll(async () => {
    // Workers in the stack's process; retries a second apart, so failed attempts show soon.
    stack = await startLocalStack({ env: { PAYROLL_WEBHOOK_RETRY_DELAYS_S: '1,1' } });
    base = `https://localhost:${stack.state.https_port}`;
    ({ token } = await stack.createOrganization('Events & Co'));
    employeeId = await hire(stack, token, 1, 'Evelyn', 'Events');
    browser = await launchChromium();
    ({ page } = await newPage(browser, base, LAPTOP));
    await signIn(page, base, token);
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.stop();
  });

  it('sends a test event from the Webhooks page with the keyboard, opens it, sees its payload and attempts, redelivers', async () => {
    // Answers 503 once, then 200: the event shows a failed attempt and its successful retry.
    const receiver = await startReceiver((_r, i) => (i === 0 ? 503 : 200));
    receivers.push(receiver);
    // Subscribed to one type nothing here raises: a test event goes to the endpoint whatever its list.
    const hook = await api('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['payroll.failed'],
      description: 'Ledger <b>sync</b>',
    });

    await nav(page, 'Webhooks').click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByRole('row').filter({ hasText: receiver.url }).waitFor();
    // Names are text, never markup.
    expect(await page.getByText('Ledger <b>sync</b>').count()).toBe(1);
    await page.waitForFunction(() => document.activeElement?.tagName === 'H1');
    await tabTo(page, new RegExp(`^Send test event to ${receiver.url.replace(/[.?*+()]/g, '\\$&')}$`));
    await page.keyboard.press('Enter');

    const result = page.getByTestId('test-event-result');
    await result.waitFor();
    expect(await result.textContent()).toMatch(/Test event queued for .*open webhook\.test evt_\w+/);
    expect(await seriousAxeViolations(page)).toEqual([]);
    // Focus moved to the outcome: the next Tab is its link to the event.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('test-event-result');
    await page.keyboard.press('Tab');
    expect((await activeElement(page)).text).toMatch(/^open webhook\.test evt_/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Event' }).waitFor();
    testEventId = decodeURIComponent(new URL(page.url()).hash.replace('#/events/', ''));
    expect(testEventId).toMatch(/^evt_/);

    // The payload, as the receiver got it (and signed with the endpoint's secret), rendered as text.
    const payload = page.getByTestId('event-payload');
    const shown = JSON.parse((await payload.textContent()) ?? '');
    expect(shown).toEqual({
      id: testEventId,
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { test: true, webhook_id: hook.webhook_id, url: receiver.url, message: expect.any(String) },
    });
    expect(await payload.locator('code *').count()).toBe(0);
    const [first] = await receiver.waitFor((r) => r.length >= 1);
    expect(new Webhook(hook.secret).verify(first!.body, first!.headers as Record<string, string>)).toEqual(shown);

    // Every attempt, with its status code, response time and error; the page follows the retry by itself.
    const attempts = page.getByTestId('attempts').locator('tbody tr');
    await vi.waitFor(async () => expect(await attempts.count()).toBe(2), { timeout: 15_000, interval: 100 });
    await page.getByTestId('delivery').getByText('succeeded').waitFor();
    const rows = await attempts.evaluateAll((trs) =>
      trs.map((tr) =>
        Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.dataset.label, td.textContent])),
      ),
    );
    expect(rows).toEqual([
      {
        '#': '1',
        Time: expect.any(String),
        Status: '503',
        'Response time': expect.stringMatching(/^\d+ ms$/),
        Error: expect.stringContaining('HTTP 503'),
      },
      {
        '#': '2',
        Time: expect.any(String),
        Status: '200',
        'Response time': expect.stringMatching(/^\d+ ms$/),
        Error: '—',
      },
    ]);
    expect(await noSidewaysScroll(page)).toBe(true);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'event-detail', true);

    // Redeliver, by keyboard: the same webhook-id again, one more attempt on the page.
    await page.getByRole('heading', { level: 1, name: 'Event' }).focus();
    await tabTo(page, /^Redeliver$/);
    await page.keyboard.press('Enter');
    await page.getByText('Redelivery queued to 1 endpoint.').waitFor();
    const again = await receiver.waitFor((r) => r.length >= 3);
    expect(again[2]!.headers['webhook-id']).toBe(testEventId);
    await vi.waitFor(async () => expect(await attempts.count()).toBe(3), { timeout: 15_000, interval: 100 });

    // A second test within the minute: the API's 429, said plainly.
    await nav(page, 'Webhooks').click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByRole('button', { name: `Send test event to ${receiver.url}` }).press('Enter');
    await result.getByText('No test event was sent').waitFor();
    expect(await result.textContent()).toContain('at most one test event a minute');
    expect(await result.getByRole('alert').textContent()).toMatch(/\(429 rate_limited\).*retry in \d+ s/);
    expect(receiver.received).toHaveLength(3);
  });

  it('says what is true of an event skipped while its endpoint was paused, and refuses a disabled endpoint’s test (409)', async () => {
    const failing = await startReceiver(() => 500);
    receivers.push(failing);
    const hook = await api('POST', '/v1/webhooks', { url: failing.url, events: ['payroll.submitted'] });
    // Five failed events in a row pause it as unreliable.
    for (let i = 0; i < 5; i++) await api('POST', '/v1/payroll', payroll());
    await failing.waitFor((r) => r.length >= 15, 30_000);
    await vi.waitFor(
      async () => expect((await api('GET', `/v1/webhooks/${hook.webhook_id}`)).status).toBe('unreliable'),
      { timeout: 10_000, interval: 100 },
    );
    await api('POST', '/v1/payroll', payroll());
    const skipped = (await api('GET', '/v1/events?type=payroll.submitted&limit=1')).events[0];
    expect(skipped.deliveries).toEqual([]);
    skippedEventId = skipped.id;

    await page.goto(`${base}/dashboard/#/events/${skippedEventId}`);
    await page.getByRole('heading', { level: 1, name: 'Event' }).waitFor();
    expect(await page.getByTestId('not-delivered').textContent()).toContain(NOT_DELIVERED);
    expect(await page.content()).not.toContain('no endpoint subscribed');

    // The list says the same, filtered to the type.
    await nav(page, 'Events').click();
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
    await page.getByLabel('Type').selectOption('payroll.submitted');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    // The list in view until the filtered page arrives is the unfiltered one: wait for the filtered one.
    const types = page.getByTestId('events-table').locator('td[data-label="Event"] strong');
    await expect
      .poll(async () => new Set(await types.allTextContents()), { timeout: 10_000 })
      .toEqual(new Set(['payroll.submitted']));
    const row = page.getByTestId('events-table').getByRole('row').filter({ hasText: skippedEventId });
    expect(await row.textContent()).toContain(NOT_DELIVERED);

    // A disabled endpoint gets nothing, test events included: the API's 409, said plainly.
    await api('PATCH', `/v1/webhooks/${hook.webhook_id}`, { status: 'disabled' });
    await nav(page, 'Webhooks').click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByRole('row').filter({ hasText: failing.url }).getByText('disabled').waitFor();
    await page.getByRole('button', { name: `Send test event to ${failing.url}` }).press('Enter');
    const result = page.getByTestId('test-event-result');
    await result.getByText('No test event was sent').waitFor();
    expect(await result.textContent()).toContain('This endpoint is disabled');
    expect(await result.getByRole('alert').textContent()).toMatch(/\(409 conflict\)/);
    expect(await page.content()).not.toContain('no endpoint subscribed');
  });

  it('filters the list by type and delivery status; list and detail pass axe at laptop size', async () => {
    await nav(page, 'Events').click();
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
    const table = page.getByTestId('events-table');
    // Newest first, 25 to a page: the runs' events come first, the skipped one among them.
    await table.getByRole('row').filter({ hasText: skippedEventId }).waitFor();
    await page.getByLabel('Type').selectOption('webhook.test');
    await page.getByLabel('Delivery status').selectOption('succeeded');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await vi.waitFor(async () => expect(await table.locator('tbody tr').count()).toBe(1), { timeout: 10_000 });
    expect(await table.textContent()).toContain(testEventId);

    await page.getByLabel('Type').selectOption('payroll.submitted');
    await page.getByLabel('Delivery status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await vi.waitFor(async () => expect(await table.locator('tbody tr').count()).toBe(5), { timeout: 10_000 });
    expect(await table.textContent()).not.toContain(skippedEventId);

    await page.getByRole('button', { name: 'Clear' }).click();
    await table.getByRole('row').filter({ hasText: skippedEventId }).waitFor();
    expect(await table.locator('tbody tr').count()).toBe(25);
    await page.getByRole('button', { name: 'Load older events' }).click();
    await table.getByRole('row').filter({ hasText: testEventId }).waitFor();
    expect(await noSidewaysScroll(page)).toBe(true);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shoot(page, 'events');

    // Opened from the list by its link.
    await table.getByRole('row').filter({ hasText: testEventId }).getByRole('link', { name: 'webhook.test' }).click();
    await page.getByRole('heading', { level: 1, name: 'Event' }).waitFor();
    await page.getByTestId('event-payload').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('shows a payload carrying markup as text: no element is made of it and no script of it runs', async () => {
    // No event the API raises today carries client-given text, so the page is served one that does: the API's own
    // answer for the test event, with markup put into its data on the way (intercepted in the browser).
    const markup = '<img src="x" onerror="window.__payloadRan = 1"><b>bold</b><script>window.__payloadRan = 2</script>';
    await page.route(`**/v1/events/${testEventId}`, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      body.data.data.message = markup;
      await route.fulfill({ response, json: body });
    });
    try {
      await page.goto(`${base}/dashboard/#/events`);
      await page.goto(`${base}/dashboard/#/events/${encodeURIComponent(testEventId)}`);
      const payload = page.getByTestId('event-payload');
      await payload.waitFor();
      expect(JSON.parse((await payload.textContent()) ?? '').data.message).toBe(markup);
      expect(await payload.locator('code *').count()).toBe(0);
      expect(await page.locator('img[src="x"]').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __payloadRan?: number }).__payloadRan)).toBeUndefined();
    } finally {
      // Waits for a handler still answering the page's once-a-second refresh.
      await page.unrouteAll({ behavior: 'wait' });
    }
  });

  it('works on a phone: list and detail without sideways scrolling, and no serious axe violation', async () => {
    const phone = await newPage(browser, base, PHONE, 2);
    try {
      await signIn(phone.page, base, token);
      await phone.page.goto(`${base}/dashboard/#/events`);
      await phone.page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
      await phone.page.getByLabel('Type').selectOption('webhook.test');
      await phone.page.getByRole('button', { name: 'Apply filters' }).tap();
      await phone.page.getByTestId('events-table').getByRole('row').filter({ hasText: testEventId }).waitFor();
      expect(await noSidewaysScroll(phone.page)).toBe(true);
      // Rows are cards: each cell carries its column's name.
      expect(
        await phone.page.getByTestId('events-table').locator('td[data-label="Deliveries"]').first().isVisible(),
      ).toBe(true);
      expect(await seriousAxeViolations(phone.page)).toEqual([]);

      await phone.page
        .getByTestId('events-table')
        .getByRole('row')
        .filter({ hasText: testEventId })
        .getByRole('link', { name: 'webhook.test' })
        .tap();
      await phone.page.getByRole('heading', { level: 1, name: 'Event' }).waitFor();
      await phone.page.getByTestId('attempts').first().waitFor();
      expect(await noSidewaysScroll(phone.page)).toBe(true);
      expect(await seriousAxeViolations(phone.page)).toEqual([]);

      await phone.page.goto(`${base}/dashboard/#/events/${skippedEventId}`);
      await phone.page.getByTestId('not-delivered').waitFor();
      expect(await noSidewaysScroll(phone.page)).toBe(true);
      expect(await seriousAxeViolations(phone.page)).toEqual([]);

      // The session's token lives in session storage only.
      expect(
        await phone.page.evaluate(() => ({
          session: sessionStorage.getItem('payroll-dashboard.token') !== null,
          local: localStorage.length,
          cookie: document.cookie,
        })),
      ).toEqual({ session: true, local: 0, cookie: '' });
      expect(await phone.context.cookies()).toEqual([]);
    } finally {
      await phone.context.close();
    }
  });
});
