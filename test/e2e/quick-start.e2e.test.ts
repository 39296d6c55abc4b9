import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { readNacha } from '../support/nacha-check.js';

/**
 * The README's quick start, run as a newcomer would paste it into a second terminal: the block the README marks
 * `<!-- quick-start -->`, verbatim, in bash with `set -euo pipefail`, against a local stack. Only where it runs
 * differs: the stack's port and data folder come through the variables the block itself reads (`API`,
 * `PAYROLL_DATA_DIR`), and `npm` is run from the repository while the files it downloads land in a folder of
 * the test's own. A command or an id capture that breaks fails this test.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

function quickStartBlock(): string {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  const marker = lines.findIndex((l) => l.trim().startsWith('<!-- quick-start'));
  if (marker < 0) throw new Error('README.md has no <!-- quick-start --> block');
  const open = lines.findIndex((l, i) => i > marker && l.trim() === '```sh');
  const close = lines.findIndex((l, i) => i > open && l.trim() === '```');
  return lines.slice(open + 1, close).join('\n');
}

let stack: RunningStack;
let work: string;

beforeAll(async () => {
  stack = await startLocalStack();
  work = mkdtempSync(join(tmpdir(), 'payroll-quick-start-'));
});

afterAll(async () => {
  await stack?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the README's quick start", () => {
  it('reaches a completed run, its bank file, its paystub and the PDF by copy and paste', async () => {
    const script = [
      'set -euo pipefail',
      `npm() { command npm --prefix ${JSON.stringify(ROOT)} "$@"; }`,
      quickStartBlock(),
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], {
      cwd: work,
      timeout: 120_000,
      env: {
        ...process.env,
        API: `https://localhost:${stack.state.https_port}/v1`,
        PAYROLL_DATA_DIR: stack.dir,
      },
    });
    expect(stdout).toContain('completed');
    const file = readFileSync(join(work, 'payroll.ach'), 'utf8');
    const entries = readNacha(file).batches.flatMap((b) => b.entries);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.account).toBe('123456789');
    expect(existsSync(join(work, 'paystub.pdf'))).toBe(true);
    expect(readFileSync(join(work, 'paystub.pdf')).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('answers GET /v1/ with an index whose links all answer', async () => {
    for (const path of ['/v1', '/v1/']) {
      const index = await stack.request('GET', path);
      expect(index.status).toBe(200);
      expect(index.body).toMatchObject({
        status: 200,
        message: 'OK',
        data: { links: { reference: '/docs', openapi: '/v1/openapi.json', console: '/dashboard/' } },
        request_id: index.headers['x-request-id'],
      });
      const links = (index.body as { data: { links: Record<string, string> } }).data.links;
      // The console is served beside the API, not by it: outside the API's document.
      for (const link of Object.values(links))
        expect((await stack.request('GET', link, { validate: false })).status, link).toBe(200);
    }
  });
});
