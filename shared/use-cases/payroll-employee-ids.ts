import { objectKeys, type ObjectStore } from '../adapters/object-store.js';
import type { StoredSubmission } from './submit-payroll.js';

/** At most this many ids are kept (about 8 MB), the runs read least recently dropped first. */
export const MAX_CACHED_EMPLOYEE_IDS = 100_000;

const cache = new Map<string, readonly string[]>();
let cachedIds = 0;

/**
 * The employee ids of a payroll run, in submission order, read from its stored submission. A run's employees never
 * change once it is accepted, so a container keeps them: a client polling GET /v1/payroll/{id} while a large run
 * is processed reads the stored body (several MB at 25,000 employees) once per container, not on every poll. The key
 * holds the organization, and the caller has already found the run in that organization. A submission not found is
 * not remembered.
 */
export async function payrollEmployeeIds(
  objects: ObjectStore,
  orgId: string,
  payrollId: string,
): Promise<readonly string[]> {
  const key = `${orgId}/${payrollId}`;
  const known = cache.get(key);
  if (known) {
    // Most recently read last, so eviction takes the run read longest ago.
    cache.delete(key);
    cache.set(key, known);
    return known;
  }
  const stored = await objects.getJson<StoredSubmission>(objectKeys.submission(orgId, payrollId));
  if (!stored) return [];
  const ids = stored.employees.map((e) => e.employee_id);
  if (ids.length <= MAX_CACHED_EMPLOYEE_IDS) {
    cache.set(key, ids);
    cachedIds += ids.length;
    for (const [oldest, value] of cache) {
      if (cachedIds <= MAX_CACHED_EMPLOYEE_IDS) break;
      cache.delete(oldest);
      cachedIds -= value.length;
    }
  }
  return ids;
}

/** For tests: forget every run. */
export function clearPayrollEmployeeIdsForTests(): void {
  cache.clear();
  cachedIds = 0;
}
