import { describe, expect, it } from 'vitest';
import { RateLimitRepository } from '../../shared/data/rate-limit-repository.js';
import { LEASE_MS, maxLease, RateLimiter } from '../../shared/http/rate-limiter.js';
import { createTestTable } from '../support/engines.js';

/** GCRA on DynamoDB Local through the real SDK: two limiters on one table stand for two Lambda containers. */
describe('rate limiting on the real engine', () => {
  it('grants exactly the limit to 40 concurrent requests from two containers, with a countdown', async () => {
    const table = await createTestTable();
    let now = Date.now();
    const a = new RateLimiter(new RateLimitRepository(table), () => now);
    const b = new RateLimiter(new RateLimitRepository(table), () => now);
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).take('key_1#read', { perMinute: 5 })),
    );
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

/** Counts the conditional writes a limiter makes, on the real engine. */
function countingRepo(table: Awaited<ReturnType<typeof createTestTable>>) {
  const repo = new RateLimitRepository(table);
  const calls: number[] = [];
  const take = repo.take.bind(repo);
  repo.take = async (key, limit, now, wanted = 1) => {
    calls.push(wanted);
    return take(key, limit, now, wanted);
  };
  return { repo, calls };
}

describe('rate-limit leases', () => {
  it('stays exact across two leasing containers: 700 requests at 600 per minute → exactly 600 allowed', async () => {
    const table = await createTestTable();
    let now = Date.now();
    const a = new RateLimiter(new RateLimitRepository(table), () => now);
    const b = new RateLimiter(new RateLimitRepository(table), () => now);
    let allowed = 0;
    // Waves of 20 concurrent requests, 10 ms apart: steady enough traffic that both containers lease.
    for (let wave = 0; wave < 35; wave++) {
      const decisions = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).take('key_l#read', { perMinute: 600 })),
      );
      allowed += decisions.filter((d) => d.allowed).length;
      now += 10;
    }
    // 350 ms at 10 cells per second refills 3 cells: 600 + 3 at most, and leases never add any.
    expect(allowed).toBeGreaterThanOrEqual(600 - 2 * maxLease({ perMinute: 600 }));
    expect(allowed).toBeLessThanOrEqual(603);
  });

  it('answers steady traffic from a reserve: far fewer writes than requests', async () => {
    const table = await createTestTable();
    const { repo, calls } = countingRepo(table);
    let now = Date.now();
    const limiter = new RateLimiter(repo, () => now);
    const decisions = [];
    for (let i = 0; i < 300; i++) {
      decisions.push(await limiter.take('key_s#read', { perMinute: 60_000 }));
      now += 2; // 500 requests per second
    }
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(calls.length).toBeLessThan(300 / 10);
    // The table holds what was reserved: the requests served plus at most one unused lease.
    const served = calls.reduce((s, n) => s + n, 0);
    expect(served).toBeGreaterThanOrEqual(300);
    expect(served).toBeLessThanOrEqual(300 + maxLease({ perMinute: 60_000 }));
  });

  it('never leases for a trickle, and lets a reserve lapse after a second', async () => {
    const table = await createTestTable();
    const { repo, calls } = countingRepo(table);
    let now = Date.now();
    const limiter = new RateLimiter(repo, () => now);
    for (let i = 0; i < 5; i++) {
      await limiter.take('key_t#read', { perMinute: 6_000 });
      now += 1_500;
    }
    expect(calls).toEqual([1, 1, 1, 1, 1]);

    // A burst leases; a second later the unused cells are gone and the next request writes again.
    for (let i = 0; i < 40; i++) await limiter.take('key_t#read', { perMinute: 6_000 });
    const writesAfterBurst = calls.length;
    now += LEASE_MS;
    await limiter.take('key_t#read', { perMinute: 6_000 });
    expect(calls.length).toBe(writesAfterBurst + 1);
  });
});
