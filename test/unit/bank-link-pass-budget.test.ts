import { describe, expect, it } from 'vitest';
import { PASS_RESERVE_MS, withinBudget } from '../../shared/use-cases/bank-link/pass-budget.js';

/**
 * The bank-link worker's budget: no organization's pass starts once the invocation has less than the reserve left,
 * so the timeout never cuts an upload half-way; those left wait for the next minute.
 */
describe('the bank-link pass budget', () => {
  it('starts passes while the invocation has room, and defers the rest in order', async () => {
    // A 300 s invocation in which each pass takes 60 s (a slow bank): the clock is the passes' own.
    let elapsed = 0;
    const remainingMs = () => 300_000 - elapsed;
    const started: string[] = [];
    const { served, deferred } = await withinBudget(
      ['a', 'b', 'c', 'd', 'e'],
      { parallel: 1, remainingMs },
      async (org) => {
        started.push(org);
        elapsed += 60_000;
        return org.toUpperCase();
      },
    );
    // 300 s, 240 s, 180 s, 120 s left when a to d start; 60 s (under the 90 s reserve) when e would.
    expect(PASS_RESERVE_MS).toBe(90_000);
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(served).toEqual(['A', 'B', 'C', 'D']);
    expect(deferred).toEqual(['e']);
  });

  it('serves everyone when nothing bounds it (the local stack), a few at a time', async () => {
    let running = 0;
    let most = 0;
    const { served, deferred } = await withinBudget([1, 2, 3, 4, 5, 6, 7, 8, 9], { parallel: 4 }, async (n) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return n;
    });
    expect(served.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(deferred).toEqual([]);
    expect(most).toBe(4);
  });
});
