import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sandboxBank, SIMULATE_FAIL_NOTE } from '../../shared/adapters/sandbox-bank.js';
import { productionBank } from '../../shared/adapters/bank.js';

/**
 * The sandbox's simulations (`simulate:` notes, the returned account 000000000) live in its simulated bank
 * (shared/adapters/sandbox-bank.ts) and nowhere else of the Lambda source: production paths never branch on them.
 * Comments may name them; code may not.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ADAPTER = 'shared/adapters/sandbox-bank.ts';
/** Nine zeros that are not the sandbox's account: an invalid routing number, and the placeholder destination. */
const ROUTING_ZEROS = new Set(['shared/domain/aba.ts', 'shared/domain/settings.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(c|m)?(t|j)sx?$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

/** The file's text without its comments. */
function code(text: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  let out = '';
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) continue;
    out += scanner.getTokenText();
  }
  return out;
}

function sandboxLeaks(files: readonly string[], read: (file: string) => string): string[] {
  return files.flatMap((file) => {
    if (file === ADAPTER) return [];
    const text = code(read(file));
    const found: string[] = [];
    if (text.includes('simulate:')) found.push(`${file}: simulate:`);
    if (/(?<!\d)000000000(?!\d)/.test(text) && !ROUTING_ZEROS.has(file)) found.push(`${file}: 000000000`);
    return found;
  });
}

describe('the sandbox bank', () => {
  it('is the one place of shared/ and functions/ that knows the simulations', () => {
    const files = [...sourceFiles('shared'), ...sourceFiles('functions')];
    expect(files).toContain(ADAPTER);
    expect(sandboxLeaks(files, (f) => readFileSync(join(ROOT, f), 'utf8'))).toEqual([]);
  });

  it('would find a leak (the check itself)', () => {
    const files = ['shared/x.ts', 'shared/y.ts', 'shared/z.ts', ADAPTER];
    const texts: Record<string, string> = {
      'shared/x.ts': "if (note === 'simulate:fail') fail();",
      'shared/y.ts': "const returned = account === '000000000';",
      'shared/z.ts': "// 'simulate:fail' in a comment\nconst id = '0000000000000';",
      [ADAPTER]: "'simulate:reject' '000000000'",
    };
    expect(sandboxLeaks(files, (f) => texts[f]!)).toEqual(['shared/x.ts: simulate:', 'shared/y.ts: 000000000']);
  });

  it('simulates only in the sandbox: the production bank adds nothing', async () => {
    const submission = {
      pay_period_start: '2026-01-01',
      pay_period_end: '2026-01-15',
      pay_date: '2026-01-20',
      employees: [
        {
          employee_id: 'a',
          hours_worked_hundredths: 0,
          gross_pay: 1,
          bonuses: 0,
          deductions: {},
          notes: 'simulate:reject',
        },
        {
          employee_id: 'b',
          hours_worked_hundredths: 0,
          gross_pay: 1,
          bonuses: 0,
          deductions: {},
          notes: SIMULATE_FAIL_NOTE,
        },
      ],
    } as unknown as Parameters<typeof sandboxBank.reviewEntries>[0];
    expect(sandboxBank.reviewEntries(submission).map((f) => [f.code, f.employee_id])).toEqual([
      ['simulated_rejection', 'a'],
    ]);
    expect(await sandboxBank.failsProcessing(async () => submission)).toMatch(/simulate:fail/);
    expect(productionBank.reviewEntries(submission)).toEqual([]);
    expect(await productionBank.failsProcessing(async () => submission)).toBeUndefined();
  });
});
