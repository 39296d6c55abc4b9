import type { RateLimitRepository } from '../data/rate-limit-repository.js';
import { allowedDecision, intervalMs, refusedDecision, type Limit, type RateDecision } from '../domain/rate-limit.js';

interface Waiting {
  resolve(d: RateDecision): void;
  reject(e: unknown): void;
}

/**
 * Coalesces the checks of one key in this container: while a write for the key is in flight, further requests
 * wait, and the next write takes as many cells as there are waiters, in one conditional update. Exact, since cells
 * are still reserved in the table (nothing is granted locally on credit), but a burst of 32 concurrent requests
 * costs a few writes instead of 32 contending on one item.
 */
export class RateLimiter {
  private readonly queues = new Map<string, { limit: Limit; waiting: Waiting[]; busy: boolean }>();

  constructor(private readonly repo: RateLimitRepository, private readonly now: () => number = Date.now) {}

  take(bucketKey: string, limit: Limit): Promise<RateDecision> {
    return new Promise((resolve, reject) => {
      let q = this.queues.get(bucketKey);
      if (!q) {
        q = { limit, waiting: [], busy: false };
        this.queues.set(bucketKey, q);
      }
      q.waiting.push({ resolve, reject });
      if (!q.busy) void this.flush(bucketKey);
    });
  }

  private async flush(bucketKey: string): Promise<void> {
    const q = this.queues.get(bucketKey)!;
    q.busy = true;
    while (q.waiting.length > 0) {
      const batch = q.waiting.splice(0, q.limit.perMinute);
      const now = this.now();
      try {
        const { granted, tat } = await this.repo.take(bucketKey, q.limit, now, batch.length);
        const T = intervalMs(q.limit);
        batch.forEach((w, i) => {
          // The i-th granted cell ends at tat − (granted − 1 − i)·T: each waiter sees its own remaining count.
          if (i < granted) w.resolve(allowedDecision(q.limit, now, tat - (granted - 1 - i) * T));
          else w.resolve(refusedDecision(q.limit, now, tat));
        });
      } catch (err) {
        batch.forEach((w) => w.reject(err));
      }
    }
    q.busy = false;
    this.queues.delete(bucketKey);
  }
}
