import { beforeEach, describe, expect, it } from 'vitest';
import { objectKeys, type ObjectStore } from '../../shared/adapters/object-store.js';
import {
  clearPayrollEmployeeIdsForTests,
  MAX_CACHED_EMPLOYEE_IDS,
  payrollEmployeeIds,
} from '../../shared/use-cases/payroll-employee-ids.js';

/** A store holding stored submissions by key, counting its reads. */
function storeWith(submissions: Record<string, string[]>) {
  const reads: string[] = [];
  const objects = {
    async getJson(key: string) {
      reads.push(key);
      const ids = submissions[key];
      return ids && { employees: ids.map((employee_id) => ({ employee_id })) };
    },
  } as unknown as ObjectStore;
  return { objects, reads };
}
const ids = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('payrollEmployeeIds', () => {
  beforeEach(() => clearPayrollEmployeeIdsForTests());

  it("reads a run's stored submission once, then answers from memory, in submission order", async () => {
    const { objects, reads } = storeWith({ [objectKeys.submission('org_a', 'pr_1')]: ['emp_2', 'emp_1', 'emp_3'] });
    expect(await payrollEmployeeIds(objects, 'org_a', 'pr_1')).toEqual(['emp_2', 'emp_1', 'emp_3']);
    expect(await payrollEmployeeIds(objects, 'org_a', 'pr_1')).toEqual(['emp_2', 'emp_1', 'emp_3']);
    expect(reads).toEqual([objectKeys.submission('org_a', 'pr_1')]);
  });

  it('keys by organization as well as run, and never remembers a submission not found', async () => {
    const { objects, reads } = storeWith({ [objectKeys.submission('org_a', 'pr_1')]: ['emp_a'] });
    expect(await payrollEmployeeIds(objects, 'org_b', 'pr_1')).toEqual([]);
    expect(await payrollEmployeeIds(objects, 'org_b', 'pr_1')).toEqual([]);
    expect(await payrollEmployeeIds(objects, 'org_a', 'pr_1')).toEqual(['emp_a']);
    expect(reads).toHaveLength(3);
  });

  it('keeps at most MAX_CACHED_EMPLOYEE_IDS ids, dropping the run read longest ago', async () => {
    const half = MAX_CACHED_EMPLOYEE_IDS / 2;
    const { objects, reads } = storeWith({
      [objectKeys.submission('org', 'pr_1')]: ids(half, 'a'),
      [objectKeys.submission('org', 'pr_2')]: ids(half, 'b'),
      [objectKeys.submission('org', 'pr_3')]: ids(half, 'c'),
      [objectKeys.submission('org', 'pr_big')]: ids(MAX_CACHED_EMPLOYEE_IDS + 1, 'd'),
    });
    await payrollEmployeeIds(objects, 'org', 'pr_1');
    await payrollEmployeeIds(objects, 'org', 'pr_2');
    await payrollEmployeeIds(objects, 'org', 'pr_1'); // pr_2 is now the one read longest ago
    await payrollEmployeeIds(objects, 'org', 'pr_3'); // over the bound: pr_2 goes
    reads.length = 0;
    await payrollEmployeeIds(objects, 'org', 'pr_1');
    await payrollEmployeeIds(objects, 'org', 'pr_3');
    expect(reads).toEqual([]);
    await payrollEmployeeIds(objects, 'org', 'pr_2');
    expect(reads).toEqual([objectKeys.submission('org', 'pr_2')]);
    // A run larger than the whole bound is answered but not kept.
    reads.length = 0;
    expect(await payrollEmployeeIds(objects, 'org', 'pr_big')).toHaveLength(MAX_CACHED_EMPLOYEE_IDS + 1);
    await payrollEmployeeIds(objects, 'org', 'pr_big');
    expect(reads).toHaveLength(2);
  });
});
