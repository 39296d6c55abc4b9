import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  hasChromium,
  hire,
  LAPTOP,
  labelsOverflowingCells,
  launchChromium,
  newPage,
  overflowing,
  PHONE,
  seriousAxeViolations,
  shoot,
  signIn,
} from './support.js';
import { type RunningStack, startLocalStack } from '../support/local-stack.js';

/**
 * Every page of the dashboard, for an organization with nothing yet and for a busy one (runs of every outcome, runs
 * awaiting approval, one of them blocked, a returned deposit, webhooks and their events, keys, log lines): at a
 * laptop's and a phone's size each page has no serious accessibility violation (axe-core, WCAG 2.1 A and AA), does
 * not scroll sideways, and lets the keyboard reach every control it shows. `UPDATE_SCREENSHOTS=1` writes each page's picture for docs/operations.md.
 */
let stack: RunningStack;
let browser: Browser;
let base: string;
const orgs = { empty: '', busy: '' };
const busy: Record<string, string> = {};

/** The pages of an organization, by name: the dashboard's address of each. */
function pagesOf(kind: 'empty' | 'busy'): [string, string][] {
  const always: [string, string][] = [
    ['payrolls', '#/payrolls'],
    ['submit-payroll', '#/payrolls/new'],
    ['employees', '#/employees'],
    ['settings', '#/settings'],
    ['api-keys', '#/keys'],
    ['logs', '#/logs'],
    ['webhooks', '#/webhooks'],
    ['events', '#/events'],
    ['not-found', '#/no-such-page'],
  ];
  if (kind === 'empty') return always;
  return [
    ...always,
    ['payroll-completed', `#/payrolls/${busy.paid}`],
    ['payroll-failed', `#/payrolls/${busy.failed}`],
    ['payroll-rejected', `#/payrolls/${busy.rejected}`],
    ['payroll-awaiting-approval', `#/payrolls/${busy.awaiting}`],
    ['payroll-blocked', `#/payrolls/${busy.blocked}`],
    ['employee', `#/employees/${busy.returned}`],
    ['event', `#/events/${busy.event}`],
  ];
}

/** The page has drawn what it loads: its heading, and no "Loading…" left. */
async function settledPage(p: Page): Promise<void> {
  await p.locator('h1').first().waitFor();
  await p.waitForFunction(() => !/Loading/.test(document.querySelector('main')?.textContent ?? ''), undefined, {
    timeout: 15_000,
  });
}

/**
 * The visible controls Tab never reaches, walking the whole page from its top: each as its tag and name. A control
 * drawn only as a `div` with a click handler would not be found at all, so the page's own controls must be real
 * buttons, links and fields, which the page tests use by role.
 */
async function unreachable(p: Page): Promise<string[]> {
  const controls = await p.evaluate(() => {
    const all = [...document.querySelectorAll('a[href], button, input, select, textarea, summary')].filter((el) => {
      const r = el.getBoundingClientRect();
      // `:disabled` also covers the fields of a disabled fieldset, which Tab skips as it should.
      return r.width > 0 && r.height > 0 && !el.matches(':disabled');
    });
    for (const [i, el] of all.entries()) el.setAttribute('data-reach', String(i));
    return all.length;
  });
  // From the first control (the browser would otherwise go on from wherever focus last was, such as the heading a
  // page focuses when it opens), then Tab through to the end.
  await p.evaluate(() => (document.querySelector('[data-reach="0"]') as HTMLElement | null)?.focus());
  const reached = new Set<string>(['0']);
  // One full cycle: until focus is back on the first control. A control may take several presses (a date field's
  // month, day and year), so the bound is generous; focus thrown back to the top mid-way ends the cycle early and
  // leaves the rest unreached, as a keyboard user would find it.
  for (let i = 0; i < 20 * controls + 50; i++) {
    await p.keyboard.press('Tab');
    const at = await p.evaluate(() => document.activeElement?.getAttribute('data-reach') ?? null);
    if (at === '0') break;
    if (at !== null) reached.add(at);
  }
  return p.evaluate(
    (seen) =>
      [...document.querySelectorAll('[data-reach]')]
        .filter((el) => !seen.includes(el.getAttribute('data-reach')!))
        // A file input's button and a radio group's unchecked members are reached by their own keys, not Tab.
        .filter((el) => !(el instanceof HTMLInputElement && el.type === 'radio' && !el.checked))
        .map(
          (el) =>
            `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.getAttribute('type') ? `[type=${el.getAttribute('type')}]` : ''} "${(el.textContent || el.getAttribute('aria-label') || el.getAttribute('name') || '').trim()}"`,
        ),
    [...reached],
  );
}

describe.skipIf(!hasChromium)('every page of the dashboard', () => {
  beforeAll(async () => {
    stack = await startLocalStack();
    base = `https://localhost:${stack.state.https_port}`;
    orgs.empty = (await stack.createOrganization('Empty Co')).token;
    orgs.busy = (await stack.createOrganization('Nordlys Shipping & Co')).token;
    const token = orgs.busy;
    const people = ['Søren Ødegård', 'Ada Lovelace', 'Grace Hopper', 'Mallory Returned', 'Katherine Johnson'];
    const ids: string[] = [];
    for (const [i, name] of people.entries()) {
      const [first, last] = name.split(' ');
      ids.push(await hire(stack, token, i, first!, last!));
    }
    busy.returned = ids[3]!;
    expect(
      (
        await stack.request('PATCH', `/v1/employees/${busy.returned}`, {
          token,
          body: {
            bank_account: { account_number: '000000000', routing_number: '021000021', account_type: 'checking' },
          },
        })
      ).status,
    ).toBe(200);
    const hook = await stack.request('POST', '/v1/webhooks', {
      token,
      body: { url: 'http://127.0.0.1:9/payroll-events', description: 'Ledger (unreachable)' },
    });
    expect(hook.status, hook.text).toBe(201);
    const key = await stack.request('POST', '/v1/api-keys', {
      token,
      body: { name: 'Ledger sync', type: 'read-only' },
    });
    expect(key.status, key.text).toBe(201);
    const entry = (id: string, gross: number, notes?: string) => ({
      employee_id: id,
      gross_pay: gross.toFixed(2),
      hours_worked: 80,
      deductions: { taxes: (gross * 0.2).toFixed(2), benefits: 95 },
      ...(notes ? { notes } : {}),
    });
    const submit = async (body: Record<string, unknown>) => {
      const res = await stack.request('POST', '/v1/payroll', { token, body });
      expect(res.status, res.text).toBe(202);
      return res.body.data.payroll_id as string;
    };
    const period = { pay_period_start: '2026-11-01', pay_period_end: '2026-11-14' };
    busy.paid = await submit({
      ...period,
      pay_date: '2026-11-20',
      employees: ids.map((id, i) => entry(id, 93456.78 - i * 1000)),
    });
    busy.failed = await submit({
      ...period,
      type: 'off_cycle',
      pay_date: '2026-11-24',
      employees: [entry(ids[1]!, 400, 'simulate:fail')],
    });
    busy.rejected = await submit({
      ...period,
      type: 'off_cycle',
      pay_date: '2026-11-25',
      employees: [entry(ids[2]!, 400, 'simulate:reject')],
    });
    // Approval required from here on (CONTRACT §11): two runs await it, one of them blocked by an employee whose direct
    // deposit was removed since.
    const required = await stack.request('PATCH', '/v1/settings', { token, body: { payroll_approval: 'required' } });
    expect(required.status, required.text).toBe(200);
    busy.awaiting = await submit({
      ...period,
      type: 'off_cycle',
      pay_date: '2026-12-18',
      employees: [entry(ids[0]!, 1200), entry(ids[4]!, 1300)],
    });
    busy.blocked = await submit({
      ...period,
      type: 'off_cycle',
      pay_date: '2026-12-21',
      employees: [entry(ids[1]!, 800), entry(ids[2]!, 900)],
    });
    const noDeposit = await stack.request('PATCH', `/v1/employees/${ids[2]}`, { token, body: { bank_account: null } });
    expect(noDeposit.status, noDeposit.text).toBe(200);
    await vi.waitFor(
      async () => {
        const run = (await stack.request('GET', `/v1/payroll/${busy.paid}`, { token })).body.data;
        expect(run.returns.count).toBe(1);
        const blocked = (await stack.request('GET', `/v1/payroll/${busy.blocked}`, { token })).body.data;
        expect(blocked.blockers.map((b: { code: string }) => b.code)).toEqual(['missing_bank_account']);
        const events = (await stack.request('GET', '/v1/events?limit=1', { token })).body.data.events;
        expect(events.length).toBe(1);
        busy.event = events[0].id;
      },
      { timeout: 40_000, interval: 250 },
    );
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('signs in from an accessible page that fits a phone', async () => {
    for (const [size, scale] of [
      [LAPTOP, 1],
      [PHONE, 2],
    ] as const) {
      const { context, page } = await newPage(browser, base, size, scale);
      try {
        await page.goto(`${base}/dashboard/`);
        await page.getByLabel('Admin token').waitFor();
        expect(await seriousAxeViolations(page)).toEqual([]);
        expect(await overflowing(page)).toEqual([]);
        if (scale === 1) await shoot(page, 'sign-in');
      } finally {
        await context.close();
      }
    }
  });

  for (const kind of ['empty', 'busy'] as const) {
    for (const [size, scale, label] of [
      [LAPTOP, 1, 'laptop'],
      [PHONE, 2, 'phone'],
    ] as const) {
      it(`${kind} organization, ${label}: no serious axe violation, no sideways scrolling, every control reached by Tab`, async () => {
        const { context, page } = await newPage(browser, base, size, scale);
        try {
          await signIn(page, base, orgs[kind]);
          for (const [name, hash] of pagesOf(kind)) {
            await page.goto(`${base}/dashboard/${hash}`);
            await settledPage(page);
            expect(await seriousAxeViolations(page), `${name}: axe`).toEqual([]);
            expect(await overflowing(page), `${name}: sideways scrolling`).toEqual([]);
            expect(await labelsOverflowingCells(page), `${name}: labels running into the next row`).toEqual([]);
            expect(await unreachable(page), `${name}: controls Tab does not reach`).toEqual([]);
            // One screen each: every page at a laptop's size, and the busy organization's on a phone too.
            if (label === 'laptop' || kind === 'busy') await shoot(page, `${kind}-${label}-${name}`);
          }
        } finally {
          await context.close();
        }
      });
    }
  }
});
