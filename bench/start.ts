import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { progress } from './machine.js';

export interface StartResult {
  /** The first `npm start` on an empty data folder: table, queues, bucket and certificate are created. */
  firstMs: number;
  /** Later starts on the same folder, as a developer restarts it: each run's time to the ready line. */
  laterMs: number[];
  laterMedianMs: number;
  /** Of the median restart, the part the stack itself reports (engines, certificate, listeners). */
  laterStackMs: number;
}

const ROOT = join(import.meta.dirname, '..');
const RESTARTS = 5;

/** `npm start` as a developer types it, timed from the spawn to the ready line, then stopped with Ctrl-C. */
function timeStart(dir: string): Promise<{ total: number; stack: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PAYROLL_DATA_DIR: dir,
        PAYROLL_HTTPS_PORT: '0',
        PAYROLL_HTTP_PORT: '0',
        PAYROLL_SANDBOX_BANK_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    let readyMs: number | undefined;
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`npm start not ready in 60 s:\n${output}`));
    }, 60_000);
    const onData = (d: Buffer) => {
      output += d;
      if (readyMs === undefined && output.includes(' ready at ')) {
        readyMs = performance.now() - started;
        clearTimeout(timer);
        // The whole group: npm, tsx and the stack, as Ctrl-C in a terminal would.
        process.kill(-child.pid!, 'SIGINT');
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', () => {
      if (readyMs === undefined) return reject(new Error(`npm start exited before it was ready:\n${output}`));
      // The stack's own figure: from its first line of code to listening, without npm's and tsx's start.
      resolve({ total: readyMs, stack: Number(/ready at \S+\s+\[(\d+) ms\]/.exec(output)?.[1] ?? NaN) });
    });
  });
}

export async function benchStart(): Promise<StartResult> {
  const dir = mkdtempSync(join(tmpdir(), 'payroll-start-bench-'));
  try {
    progress('npm start: first run on an empty data folder');
    const firstMs = (await timeStart(dir)).total;
    const later: { total: number; stack: number }[] = [];
    for (let i = 0; i < RESTARTS; i++) {
      later.push(await timeStart(dir));
      progress(
        `npm start: restart ${i + 1}/${RESTARTS}: ${Math.round(later.at(-1)!.total)} ms (the stack's own part ${later.at(-1)!.stack} ms)`,
      );
    }
    const median = [...later].sort((a, b) => a.total - b.total)[Math.floor(RESTARTS / 2)]!;
    return { firstMs, laterMs: later.map((l) => l.total), laterMedianMs: median.total, laterStackMs: median.stack };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface TestRunResult {
  ms: number;
  passed: boolean;
  /** vitest's own summary lines ("Test Files …", "Tests …"). */
  summary: string[];
}

/** `npm test` as CI runs it (type check, then every suite), timed end to end. */
export function benchTestRun(): Promise<TestRunResult> {
  progress('npm test: the whole suite (a few minutes)');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('npm', ['test', '--silent'], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d));
    child.stderr!.on('data', (d: Buffer) => (output += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      resolve({
        ms: performance.now() - started,
        passed: code === 0,
        summary: output
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => /^(Test Files|Tests)\s/.test(l)),
      }),
    );
  });
}
