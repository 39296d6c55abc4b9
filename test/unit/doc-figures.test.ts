import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MAX_REDEBITS,
  MAX_REVERSAL_PAYMENTS,
  REDEBIT_WINDOW_DAYS,
  REVERSAL_WINDOW_BANKING_DAYS,
} from '../../shared/domain/money-back.js';

/**
 * The figures of money back the docs state in prose, compared with the one place each is declared: changing a limit
 * without the docs fails here, instead of leaving a copy that says otherwise.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const doc = (name: string) => readFileSync(resolve(ROOT, 'docs', name), 'utf8');
const ORDINAL: Record<number, string> = { 5: 'fifth' };
const WORDS: Record<number, string> = { 2: 'two' };

describe('the money-back figures the docs state', () => {
  it('reversal size, window and re-debit limits are the declared ones', () => {
    const payroll = doc('payroll.md');
    const operations = doc('operations.md');
    expect(payroll).toContain(`1 to ${MAX_REVERSAL_PAYMENTS} paystubs`);
    expect(operations).toContain(`At most ${MAX_REVERSAL_PAYMENTS} paystubs per request`);
    expect(payroll).toContain(`${ORDINAL[REVERSAL_WINDOW_BANKING_DAYS]} banking day after its effective entry date`);
    expect(payroll).toContain(`more than ${REDEBIT_WINDOW_DAYS} days have passed`);
    expect(operations).toContain(`within ${REDEBIT_WINDOW_DAYS} days of the debit's effective entry date`);
    expect(operations).toContain(`fewer than ${WORDS[MAX_REDEBITS]} re-debits`);
  });
});
