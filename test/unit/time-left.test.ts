import { describe, expect, it } from 'vitest';
import { timeLeft } from '../../dashboard/src/pages/time-left.js';

/** What the console says of a run's approve-by: the time left, or that it has passed and what that means here. */
describe('the time left to approve a run, in the console', () => {
  const deadline = '2026-12-10T20:00:00.000Z';
  const at = (iso: string) => Date.parse(iso);

  it('counts down in days, hours and minutes', () => {
    expect(timeLeft(deadline, at('2026-12-08T17:00:00Z'))).toBe('in 2 days 3 hours');
    expect(timeLeft(deadline, at('2026-12-10T18:30:00Z'))).toBe('in 1 hour 30 minutes');
    expect(timeLeft(deadline, at('2026-12-10T19:59:30Z'))).toBe('in less than a minute');
  });

  it('says the deadline passed, and in the sandbox that the run can still be approved (only production enforces it)', () => {
    const after = at('2026-12-10T20:01:00Z');
    expect(timeLeft(deadline, after, 'live')).toBe('passed');
    expect(timeLeft(deadline, after)).toBe('passed');
    expect(timeLeft(deadline, after, 'sandbox')).toBe('passed; the sandbox still approves it');
  });
});
