import type { RateLimitRepository } from '../data/rate-limit-repository.js';
import { allowedDecision, intervalMs, refusedDecision, type Limit, type RateDecision } from '../domain/rate-limit.js';

interface Waiting {
  resolve(d: RateDecision): void;
  reject(e: unknown): void;
}

interface Bucket {
  limit: Limit;
  waiting: Waiting[];
  busy: boolean;
  /** Cells reserved in the table and not yet handed out, as the TAT each one ends at (ascending). */
  leased: number[];
  leaseExpiresAt: number;
  /** Arrivals counted in 1-second windows: the demand a lease is sized by. */
  windowStart: number;
  arrivals: number;
  previousArrivals: number;
}

/** How long reserved cells may be kept by one container before they lapse. */
export const LEASE_MS = 1_000;
/** The most cells one container reserves ahead for one key. */
const MAX_LEASE = 50;
/** Keys tracked before idle ones are forgotten. */
const MAX_KEYS = 1_000;

/**
 * At most one second of the sustained rate (so a lease never holds a large share of the burst), at most
 * MAX_LEASE cells, and none for limits under 60 per minute.
 */
export const maxLease = (limit: Limit) => Math.min(MAX_LEASE, Math.floor(limit.perMinute / 60));

/**
 * Rate-limit checks for one container, with two savings on top of the table's exact GCRA state:
 *
 * - **Coalescing**: while a write for a key is in flight, further requests wait, and the next write takes as many
 *   cells as there are waiters, in one conditional update.
 * - **Leasing**: when a key's traffic in this container is steady, a write also reserves the cells the next
 *   second's requests are expected to need (at most `maxLease(limit)`), and those requests are answered from the
 *   reserve with no write and no wait.
 *
 * The limit stays exact: every cell handed out was reserved in the table first, so all containers together never
 * serve more than the bucket allows. What leasing costs is bounded and documented: a container keeps at most
 * `maxLease(limit)` cells for at most LEASE_MS (one second of the key's sustained rate at most), after which
 * unused cells lapse; so near the limit a request elsewhere may be refused up to that many cells early, and a
 * burst may be served up to one second after its cells were counted. A key seen at a trickle (no more than one
 * request per second here) never leases, so a quiet client wastes nothing.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly repo: RateLimitRepository,
    private readonly now: () => number = Date.now,
  ) {}

  take(bucketKey: string, limit: Limit): Promise<RateDecision> {
    const now = this.now();
    let b = this.buckets.get(bucketKey);
    if (!b) {
      if (this.buckets.size >= MAX_KEYS) this.forgetIdle(now);
      b = {
        limit,
        waiting: [],
        busy: false,
        leased: [],
        leaseExpiresAt: 0,
        windowStart: now,
        arrivals: 0,
        previousArrivals: 0,
      };
      this.buckets.set(bucketKey, b);
    }
    if (now - b.windowStart >= 1_000) {
      // A window with no arrival in between means the previous one is stale too.
      b.previousArrivals = now - b.windowStart >= 2_000 ? 0 : b.arrivals;
      b.arrivals = 0;
      b.windowStart = now;
    }
    b.arrivals++;
    const fromLease = b.waiting.length === 0 ? this.fromLease(b, now) : undefined;
    if (fromLease) return Promise.resolve(fromLease);
    return new Promise((resolve, reject) => {
      b.waiting.push({ resolve, reject });
      if (!b.busy) void this.flush(bucketKey, b);
    });
  }

  /** Bounds memory in a long-lived container that has seen many keys. */
  private forgetIdle(now: number): void {
    for (const [key, b] of this.buckets) {
      if (!b.busy && b.waiting.length === 0 && (b.leased.length === 0 || now >= b.leaseExpiresAt))
        this.buckets.delete(key);
    }
  }

  private fromLease(b: Bucket, now: number): RateDecision | undefined {
    if (now >= b.leaseExpiresAt) b.leased = [];
    const tat = b.leased.shift();
    return tat === undefined ? undefined : allowedDecision(b.limit, now, tat);
  }

  /** Cells to reserve beyond the waiters: the requests expected in the next LEASE_MS, within the bound. */
  private extraCells(b: Bucket, waiting: number): number {
    const expected = Math.max(b.arrivals, b.previousArrivals) * (LEASE_MS / 1_000);
    return Math.max(0, Math.min(maxLease(b.limit), Math.floor(expected) - waiting));
  }

  private async flush(bucketKey: string, b: Bucket): Promise<void> {
    b.busy = true;
    while (b.waiting.length > 0) {
      const batch = b.waiting.splice(0, b.limit.perMinute);
      const now = this.now();
      try {
        const { granted, tat } = await this.repo.take(
          bucketKey,
          b.limit,
          now,
          batch.length + this.extraCells(b, batch.length),
        );
        const T = intervalMs(b.limit);
        // The i-th granted cell ends at tat − (granted − 1 − i)·T: each request sees its own remaining count.
        const cells = Array.from({ length: granted }, (_, i) => tat - (granted - 1 - i) * T);
        batch.forEach((w, i) => {
          w.resolve(i < cells.length ? allowedDecision(b.limit, now, cells[i]!) : refusedDecision(b.limit, now, tat));
        });
        if (cells.length > batch.length) {
          b.leased = cells.slice(batch.length);
          b.leaseExpiresAt = now + LEASE_MS;
        }
        // Requests that arrived during the write are served from what it reserved, in order.
        const later = this.now();
        while (b.waiting.length > 0) {
          const d = this.fromLease(b, later);
          if (!d) break;
          b.waiting.shift()!.resolve(d);
        }
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    b.busy = false;
    // Forget idle keys, but keep one holding a live reserve or a recent demand figure.
    if (b.leased.length === 0 && this.now() - b.windowStart >= 2_000) this.buckets.delete(bucketKey);
  }
}
