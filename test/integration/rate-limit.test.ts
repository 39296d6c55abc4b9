import { describe, expect, it } from 'vitest';
import { RateLimitRepository } from '../../shared/data/rate-limit-repository.js';
import { RateLimiter } from '../../shared/http/rate-limiter.js';
import { createTestTable } from '../support/engines.js';

/** GCRA on DynamoDB Local through the real SDK: two limiters on one table stand for two Lambda containers. */
describe('rate limiting on the real engine', () => {
  it('grants exactly the limit to 40 concurrent requests from two containers, with a countdown', async () => {
    const table = await createTestTable();
    let now = Date.now();
    const a = new RateLimiter(new RateLimitRepository(table), () => now);
    const b = new RateLimiter(new RateLimitRepository(table), () => now);
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).take('key_1#read', { perMinute: 5 })));
    const allowed = decisions.filter((d) => d.allowed);
    expect(allowed).toHaveLength(5);
    expect(allowed.map((d) => d.remaining).sort()).toEqual([0, 1, 2, 3, 4]);
    const refused = decisions.filter((d) => !d.allowed);
    expect(refused.every((d) => d.retryAfterSeconds >= 1 && d.retryAfterSeconds <= 12 && d.remaining === 0)).toBe(true);

    // One cell refills every 12 s at 5 per minute: 12 s later exactly one more request passes.
    now += 12_000;
    const later = await Promise.all(Array.from({ length: 10 }, () => a.take('key_1#read', { perMinute: 5 })));
    expect(later.filter((d) => d.allowed)).toHaveLength(1);
    // A minute of quiet fills the bucket again.
    now += 60_000;
    const refilled = await Promise.all(Array.from({ length: 10 }, () => b.take('key_1#read', { perMinute: 5 })));
    expect(refilled.filter((d) => d.allowed)).toHaveLength(5);
  });

  it('keeps keys and buckets apart, and reports the reset of a full bucket', async () => {
    const table = await createTestTable();
    const limiter = new RateLimiter(new RateLimitRepository(table));
    const first = await limiter.take('key_a#read', { perMinute: 60 });
    expect(first).toMatchObject({ allowed: true, limit: 60, remaining: 59, resetSeconds: 1 });
    for (let i = 0; i < 59; i++) await limiter.take('key_a#read', { perMinute: 60 });
    expect((await limiter.take('key_a#read', { perMinute: 60 })).allowed).toBe(false);
    expect((await limiter.take('key_a#employee_write', { perMinute: 60 })).allowed).toBe(true);
    expect((await limiter.take('key_b#read', { perMinute: 60 })).allowed).toBe(true);
  });
});
