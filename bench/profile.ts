/**
 * Where a payroll run's processing time goes: the processor (the local stack's workers, in a process of their own,
 * as a Lambda container would be) runs one N-employee payroll under `node --cpu-prof`, and the profile's self time is
 * summed per function and per package.
 *
 *   npm run bench:profile -- --employees 10000 [--keep]
 *
 * Prints the top costs; `--keep` leaves the .cpuprofile (open it in Chrome DevTools) and says where.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalStack, startWorkersProcess } from '../test/support/local-stack.js';
import { progress } from './machine.js';
import { benchPayroll } from './payroll.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
}

const { values } = parseArgs({
  options: { employees: { type: 'string', default: '10000' }, keep: { type: 'boolean', default: false } },
});

/** A frame's package: the node_modules folder it lives in, the project folder, or Node itself. */
function packageOf(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + 'node_modules/'.length).split('/');
    return scope!.startsWith('@') ? `${scope}/${name}` : scope!;
  }
  if (url.startsWith('node:') || url === '') return '(node, GC, idle)';
  const project = url.match(/\/(shared|functions|local)\/.*$/);
  return project ? `project ${project[1]}/` : url;
}

export function summarize(profile: CpuProfile, top = 15) {
  const total = (profile.endTime - profile.startTime) / 1000;
  const perSample = total / Math.max(1, profile.samples.length);
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const node of profile.nodes) {
    const ms = (hits.get(node.id) ?? 0) * perSample;
    if (ms === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url
      ? `${url.replace(/^.*?(node_modules\/|\/(?=shared|functions|local)\/)/, '')}:${lineNumber + 1}`
      : '';
    const name = `${functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    byPackage.set(packageOf(url), (byPackage.get(packageOf(url)) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  return { totalMs: total, functions: sorted(byFunction), packages: sorted(byPackage) };
}

async function main() {
  const employees = Number(values.employees);
  const dir = mkdtempSync(join(tmpdir(), 'payroll-profile-'));
  const stack = await startLocalStack({ env: { PAYROLL_LOCAL_WORKERS: 'external' } });
  try {
    const org = await stack.createOrganization('Profile Co');
    const workers = await startWorkersProcess(stack, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    let result: Awaited<ReturnType<typeof benchPayroll>>;
    try {
      result = await benchPayroll(stack, org.token, org.organization_id, employees, 0, workers.pid);
    } finally {
      await workers.stop();
    }
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no profile written in ${dir}`);
    const summary = summarize(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile);
    const pad = (ms: number) => `${ms.toFixed(0).padStart(7)} ms`;
    console.log(
      `\n${employees} employees: 202 after ${result.to202Ms.toFixed(0)} ms, completed after ${result.toCompletedMs.toFixed(0)} ms`,
    );
    console.log(`processor process profiled for ${summary.totalMs.toFixed(0)} ms (from its start to its stop)\n`);
    console.log('self time by package');
    for (const [name, ms] of summary.packages) console.log(`${pad(ms)}  ${name}`);
    console.log('\nself time by function');
    for (const [name, ms] of summary.functions) console.log(`${pad(ms)}  ${name}`);
    if (values.keep) console.log(`\nprofile: ${join(dir, file)}`);
  } finally {
    await stack.stop();
    if (!values.keep) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('profile.ts')) {
  main().catch((err) => {
    progress(String(err?.stack ?? err));
    process.exit(1);
  });
}
