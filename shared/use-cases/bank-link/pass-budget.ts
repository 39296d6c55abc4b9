import { inParallel } from '../../data/batch.js';

/**
 * No organization's pass starts with less than this left of the worker's invocation: a pass cut by the timeout could
 * leave an upload half-written at the bank, which the link then reports (`partial_upload`) until someone clears it.
 */
export const PASS_RESERVE_MS = 90_000;

/**
 * Serves `organizations` a few at a time while the invocation has room: those not started before the reserve is
 * reached are deferred to the next run (every minute), in the order given.
 */
export async function withinBudget<T, R>(
  organizations: readonly T[],
  options: { parallel: number; remainingMs?: () => number; reserveMs?: number },
  serve: (organization: T) => Promise<R>,
): Promise<{ served: R[]; deferred: T[] }> {
  const served: R[] = [];
  const deferred: T[] = [];
  const reserve = options.reserveMs ?? PASS_RESERVE_MS;
  await inParallel(organizations, options.parallel, async (organization) => {
    if (options.remainingMs && options.remainingMs() < reserve) deferred.push(organization);
    else served.push(await serve(organization));
  });
  return { served, deferred };
}
