/**
 * Rate limits as a token bucket, computed by GCRA (the generic cell rate algorithm): the whole state is one number,
 * the theoretical arrival time (TAT) of the next request. A limit of L per minute is an emission interval
 * T = 60 s / L and a burst of L. A request at `now` is allowed when max(TAT, now) − now ≤ (L − 1)·T, and moves
 * TAT to max(TAT, now) + T. One number means one conditional write per request, safe across any number of
 * containers: no counter to reset, no window edge where twice the limit gets through.
 */
export interface Limit {
  perMinute: number;
}

export const intervalMs = (l: Limit) => 60_000 / l.perMinute;
export const toleranceMs = (l: Limit) => (l.perMinute - 1) * intervalMs(l);

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed right now. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until the next request would be allowed (0 when allowed). */
  retryAfterSeconds: number;
}

export function allowedDecision(l: Limit, now: number, newTat: number): RateDecision {
  return {
    allowed: true,
    limit: l.perMinute,
    remaining: Math.max(0, Math.floor((now + l.perMinute * intervalMs(l) - newTat) / intervalMs(l))),
    resetSeconds: Math.max(0, Math.ceil((newTat - now) / 1000)),
    retryAfterSeconds: 0,
  };
}

export function refusedDecision(l: Limit, now: number, tat: number): RateDecision {
  return {
    allowed: false,
    limit: l.perMinute,
    remaining: 0,
    resetSeconds: Math.max(1, Math.ceil((tat - now) / 1000)),
    retryAfterSeconds: Math.max(1, Math.ceil((tat - toleranceMs(l) - now) / 1000)),
  };
}
