import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { RunningStack } from '../support/local-stack.js';

/**
 * What the dashboard's browser test files share: Debian's Chromium driven by playwright-core (no browser download),
 * pages at a laptop's or a phone's size, signing in, hiring through the API, screenshots for docs/operations.md, and an
 * accessibility check by axe-core.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(
    `Skipping the dashboard browser tests: no Chromium at ${CHROMIUM}. Install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH.`,
  );
}

/** The flags this machine's Chromium needs: no sandbox as root, and no calls home on a closed network. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });

const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1' ? resolve(import.meta.dirname, '../../docs/screenshots') : null;

/** `UPDATE_SCREENSHOTS=1` writes the console's pictures (docs/operations.md): one screen each (the viewport) unless `fullPage`. */
export async function shoot(target: Page, name: string, fullPage = false): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  // From the top, and never with a focus ring or a caret by accident.
  await target.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
  });
  await target.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage, animations: 'disabled', caret: 'hide' });
}

/** A fresh browser context (its own session storage) at `viewport`; a scale above 1 is a touch phone. */
export async function newPage(
  browser: Browser,
  base: string,
  viewport: { width: number; height: number },
  deviceScaleFactor = 1,
): Promise<{ context: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({
    viewport,
    ignoreHTTPSErrors: true,
    locale: 'en-US',
    timezoneId: 'UTC',
    deviceScaleFactor,
    isMobile: deviceScaleFactor > 1,
    hasTouch: deviceScaleFactor > 1,
  });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const p = await ctx.newPage();
  p.on('dialog', (d) => void d.accept());
  return { context: ctx, page: p };
}

/** A link of the main navigation (a page may link to the same place elsewhere, as a breadcrumb does). */
export const nav = (p: Page, name: string) => p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });

export const activeElement = (p: Page) =>
  p.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return { id: el?.id ?? '', tag: el?.tagName ?? '', text: el?.textContent?.trim() ?? '' };
  });

export async function signIn(p: Page, base: string, token: string): Promise<void> {
  await p.goto(`${base}/dashboard/`);
  await p.getByLabel('Admin token').fill(token);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('heading', { level: 1, name: 'Payrolls' }).waitFor();
}

/** An employee hired through the API; `n` makes the email and account number unique. */
export async function hire(
  stack: RunningStack,
  token: string,
  n: number,
  first: string,
  last: string,
): Promise<string> {
  const res = await stack.request('POST', '/v1/employees', {
    token,
    body: {
      first_name: first,
      last_name: last,
      email: `${first}.${last}${n}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, ''),
      employment_type: n % 4 === 3 ? 'part_time' : 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2026-01-05',
      bank_account: {
        account_number: String(55_000_100 + n),
        routing_number: '021000021',
        account_type: n % 2 ? 'savings' : 'checking',
      },
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.employee_id as string;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * The page as it is now checked by axe-core (WCAG 2.1 A and AA rules): the serious and critical violations, each
 * with the elements it names, so a failing assertion says what to fix. The site's CSP forbids inline scripts, so axe
 * is added through the browser's own evaluation channel, not a script tag.
 */
export async function seriousAxeViolations(p: Page): Promise<string[]> {
  await p.evaluate(AXE_SOURCE);
  const violations = (await p.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: unknown }> } })
      .axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return result.violations;
  })) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

/**
 * Empty when the page fits the screen's width; when it scrolls sideways, the elements that reach past the right edge
 * (innermost), each as its tag, classes and the start of its text, so a failure says what to fix.
 */
export function overflowing(p: Page): Promise<string[]> {
  return p.evaluate(() => {
    const root = document.documentElement;
    if (root.scrollWidth <= root.clientWidth) return [];
    const width = root.clientWidth;
    // What a clipping ancestor hides (a visually hidden table head) makes nothing scroll: only the rest is named.
    const clipped = (el: Element) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
        if (getComputedStyle(a).overflowX !== 'visible') return true;
      return false;
    };
    const wide = [...document.querySelectorAll('body *')].filter(
      (el) =>
        el.getBoundingClientRect().right > width + 0.5 && getComputedStyle(el).position !== 'fixed' && !clipped(el),
    );
    return wide
      .filter((el) => !wide.some((other) => other !== el && el.contains(other)))
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''} "${(el.textContent ?? '').trim().slice(0, 40)}" right=${Math.round(el.getBoundingClientRect().right)}`,
      );
  });
}

/**
 * On a phone, tables become cards whose cells carry their column's name as a label beside the value: the labels
 * taller than their cell (a long name on two lines running into the next row), each as the label and its value.
 */
export function labelsOverflowingCells(p: Page): Promise<string[]> {
  return p.evaluate(() =>
    [...document.querySelectorAll('td[data-label]')]
      .filter((td) => {
        const label = getComputedStyle(td, '::before');
        if (label.content === 'none' || label.display === 'none') return false;
        const labelHeight = Number.parseFloat(label.height);
        return Number.isFinite(labelHeight) && labelHeight > td.getBoundingClientRect().height + 0.5;
      })
      .map((td) => `${td.getAttribute('data-label')}: "${(td.textContent ?? '').trim().slice(0, 30)}"`),
  );
}
