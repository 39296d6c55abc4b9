import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { type RunningStack, startLocalStack } from '../support/local-stack.js';
import { payrollBodyFor, seedClients, seedEmployees } from '../support/seed.js';

/** The stack's process and everything under it (DynamoDB Local's JVM), SIGKILLed at once: nothing gets to clean up. */
function killHard(stack: RunningStack): void {
  const descendants = (pid: number): number[] => {
    let children: number[] = [];
    try {
      children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
        .split('\n')
        .map((l) => Number(l.trim()))
        .filter((n) => n > 0);
    } catch {
      // no children
    }
    return children.flatMap((c) => [c, ...descendants(c)]);
  };
  for (const pid of [stack.pid, ...descendants(stack.pid)]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

const EMPLOYEES = 10_000;

/**
 * The README's promise: a `kill -9` of the whole local stack in the middle of a 10,000-employee run, then `npm start`
 * on the same data folder, ends with the run completed once, exactly one paystub per employee and exactly one entry
 * per employee in its NACHA file.
 */
describe('a 10,000-employee run across a kill -9 of the whole local stack', () => {
  it('completes once, with one paystub and one NACHA entry per employee', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payroll-crash-'));
    try {
      const first = await startLocalStack({ dir });
      const org = await first.createOrganization('Crash Co');
      const employeeIds = await seedEmployees(first, seedClients(first).table, org.organization_id, EMPLOYEES);
      const submitted = await first.request('POST', '/v1/payroll', {
        token: org.token,
        body: payrollBodyFor(employeeIds, 0),
        validate: false,
      });
      expect(submitted.status).toBe(202);
      const payrollId = submitted.body.data.payroll_id as string;
      // Killed once some chunks are written and others are not.
      const progressAtKill = await vi.waitFor(
        async () => {
          const { progress } = (await first.request('GET', `/v1/payroll/${payrollId}`, { token: org.token })).body.data;
          if (progress.done === 0) throw new Error('no chunk done yet');
          return progress as { done: number; total: number };
        },
        { timeout: 60_000, interval: 20 },
      );
      killHard(first);
      expect(progressAtKill.done).toBeLessThan(EMPLOYEES);

      const second = await startLocalStack({ dir });
      try {
        expect(second.output()).toContain('Resumed 1 unfinished payroll run(s)');
        const run = await vi.waitFor(
          async () => {
            const data = (await second.request('GET', `/v1/payroll/${payrollId}`, { token: org.token })).body.data;
            if (data.status !== 'completed') throw new Error(`still ${data.status} ${data.progress.done}`);
            return data;
          },
          { timeout: 180_000, interval: 250 },
        );
        expect(run.status_history.map((h: { status: string }) => h.status)).toEqual([
          'pending',
          'processing',
          'completed',
        ]);
        // Exactly one paystub per employee, through the API's own list of the run.
        const stubs: { paystub_id: string; employee_id: string }[] = [];
        let token: string | null = null;
        do {
          const query: string = `payroll_id=${payrollId}&limit=100${token ? `&page_token=${token}` : ''}`;
          const page = (await second.request('GET', `/v1/paystubs?${query}`, { token: org.token })).body.data;
          stubs.push(...page.paystubs);
          token = page.next_page_token;
        } while (token);
        expect(stubs).toHaveLength(EMPLOYEES);
        expect(new Set(stubs.map((s) => s.paystub_id)).size).toBe(EMPLOYEES);
        expect(new Set(stubs.map((s) => s.employee_id))).toEqual(new Set(employeeIds));
        // Exactly one credit entry per employee in the file, each trace number once.
        const file = (
          await second.request('GET', `/v1/payroll/${payrollId}/disbursement`, { token: org.token, validate: false })
        ).text;
        const entries = file.split('\n').filter((line) => line.startsWith('622') || line.startsWith('632'));
        expect(entries).toHaveLength(EMPLOYEES);
        expect(new Set(entries.map((e) => e.slice(79, 94))).size).toBe(EMPLOYEES);
        expect(new Set(entries.map((e) => e.slice(39, 54).trim()))).toEqual(
          new Set(employeeIds.map((id) => id.slice(-15).toUpperCase())),
        );
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
