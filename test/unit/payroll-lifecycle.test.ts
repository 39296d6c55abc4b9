import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lifecycleBlock } from '../../scripts/generate-lifecycle.js';
import { approveBy, earliestApprovablePayDate } from '../../shared/domain/approval.js';
import {
  type LifecycleEvent,
  PAYROLL_STATES,
  PAYROLL_STATUSES,
  PAYROLL_TRANSITIONS,
  type PayrollStatus,
  transition,
} from '../../shared/domain/payroll-lifecycle.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** The contract's table (CONTRACT §5, §11), written out here independently of the declaration it checks. */
const EXPECTED: Record<LifecycleEvent, { from: PayrollStatus[] | null; to: PayrollStatus }> = {
  submit: { from: null, to: 'pending' },
  submit_for_approval: { from: null, to: 'awaiting_approval' },
  approve: { from: ['awaiting_approval'], to: 'pending' },
  start: { from: ['pending'], to: 'processing' },
  finish: { from: ['processing'], to: 'completed' },
  reject: { from: ['processing'], to: 'rejected' },
  fail: { from: ['pending', 'processing'], to: 'failed' },
  cancel: { from: ['awaiting_approval', 'pending', 'processing', 'completed'], to: 'cancelled' },
};

describe('the payroll lifecycle', () => {
  const events = Object.keys(PAYROLL_TRANSITIONS) as LifecycleEvent[];
  const cases = events.flatMap((event) => [null, ...PAYROLL_STATUSES].map((from) => [event, from] as const));

  it.each(cases)('%s from %s: allowed exactly as the contract says, in the sandbox', (event, from) => {
    const expected = EXPECTED[event];
    const allowed = from === null ? expected.from === null : (expected.from ?? []).includes(from);
    const outcome = transition(from, event, { environment: 'sandbox' });
    expect(outcome.ok).toBe(allowed);
    if (outcome.ok) expect(outcome.to).toBe(expected.to);
  });

  it('cancels past approval in the sandbox only; a run awaiting approval anywhere', () => {
    for (const from of ['pending', 'processing', 'completed'] as const)
      expect(transition(from, 'cancel', { environment: 'production' })).toEqual({ ok: false, reason: 'sandbox_only' });
    expect(transition('awaiting_approval', 'cancel', { environment: 'production' })).toMatchObject({
      ok: true,
      to: 'cancelled',
      commands: ['release_window', 'withdraw_file', 'void_paystubs'],
    });
  });

  it('emits the events the contract names on each transition, and starts a run only once it is approved', () => {
    expect(transition(null, 'submit', { environment: 'sandbox' })).toMatchObject({
      emits: ['payroll.submitted'],
      commands: ['enqueue_start'],
    });
    expect(transition(null, 'submit_for_approval', { environment: 'sandbox' })).toMatchObject({
      emits: ['payroll.submitted'],
      commands: [],
    });
    expect(transition('awaiting_approval', 'approve', { environment: 'production' })).toMatchObject({
      emits: ['payroll.approved'],
      commands: ['enqueue_start'],
    });
    expect(PAYROLL_TRANSITIONS.finish.emits).toEqual(['payroll.processed', 'payroll.completed', 'paystub.generated']);
  });

  it('has no status the declaration does not know: in the OpenAPI document', () => {
    const doc = JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8')) as {
      components: { schemas: Record<string, { properties: { status: { enum: string[] } } }> };
    };
    for (const schema of ['PayrollSummary', 'Payroll'])
      expect(doc.components.schemas[schema]!.properties.status.enum, schema).toEqual(PAYROLL_STATUSES);
  });

  it('has no status the declaration does not know: compared against in the code', () => {
    const files = ['shared', 'functions', 'dashboard/src'].flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.tsx?$/.test(f))
        .map((f) => join(dir, f)),
    );
    const unknown: string[] = [];
    // A run's status compared with a literal: `record.status === 'x'`, `run.status !== 'x'`, `status: 'x'`.
    const pattern = /\b(?:record|run|payroll|now|after|ended|p)\??\.status\s*[!=]==?\s*'([a-z_]+)'/g;
    for (const file of files)
      for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(pattern))
        if (!(PAYROLL_STATUSES as readonly string[]).includes(m[1]!) && !isOtherStatus(m[1]!))
          unknown.push(`${file}: ${m[1]}`);
    expect(unknown).toEqual([]);
    // The check reads what it should: a status the code compares against is found.
    expect(files.some((f) => readFileSync(join(ROOT, f), 'utf8').match(pattern))).toBe(true);
  });

  it('labels every status for the console', () => {
    for (const status of PAYROLL_STATUSES) expect(PAYROLL_STATES[status].label).toMatch(/^[A-Z]/);
    expect(PAYROLL_STATES.completed.label).toBe('Processed');
  });
});

/** Statuses of other things the same names hold (a paystub, a payment, a webhook, a delivery, an account). */
function isOtherStatus(value: string): boolean {
  return [
    'issued',
    'voided',
    'scheduled',
    'returned',
    'no_payment',
    'active',
    'invalid',
    'removed',
    'unreliable',
    'disabled',
    'succeeded',
  ].includes(value);
}

describe('the approval deadline (New York time)', () => {
  it('is the release day at the cut-off, across the changes to and from daylight saving time', () => {
    // Friday 6 March 2026 is standard time (UTC-5); Monday 9 March, after the change, daylight time (UTC-4).
    expect(approveBy('2026-03-06', {})).toBe('2026-03-06T20:00:00.000Z');
    expect(approveBy('2026-03-09', {})).toBe('2026-03-09T19:00:00.000Z');
    // Friday 30 October 2026 is daylight time; Monday 2 November, after the change back, standard time.
    expect(approveBy('2026-10-30', { approval_cutoff_time: '09:30' })).toBe('2026-10-30T13:30:00.000Z');
    expect(approveBy('2026-11-02', { approval_cutoff_time: '09:30' })).toBe('2026-11-02T14:30:00.000Z');
  });

  it("answers the earliest pay date still possible: today's release before the cut-off, the next one after it", () => {
    // Tuesday 10 March 2026, 14:59 and 15:01 in New York (daylight time, UTC-4).
    expect(earliestApprovablePayDate(new Date('2026-03-10T18:59:00Z'), '15:00')).toBe('2026-03-11');
    expect(earliestApprovablePayDate(new Date('2026-03-10T19:01:00Z'), '15:00')).toBe('2026-03-12');
    // Friday 6 March 2026 after the cut-off: the next release is Monday, paying Tuesday.
    expect(earliestApprovablePayDate(new Date('2026-03-06T20:30:00Z'), '15:00')).toBe('2026-03-10');
  });
});

describe("the README's lifecycle diagram", () => {
  it('is the one the declaration draws (npm run lifecycle writes it)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(lifecycleBlock());
  });
});
