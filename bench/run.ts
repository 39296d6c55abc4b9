import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalStack, startWorkersProcess } from '../test/support/local-stack.js';
import { machine, median, ms, progress } from './machine.js';
import type { LoadResult } from './load.js';
import { benchPayroll, type PayrollBenchResult } from './payroll.js';
import { benchPaystubs, type PaystubBenchResult } from './paystubs.js';
import { benchOverhead, type OverheadResult } from './overhead.js';
import { benchColdStart, type BundleResult, type ColdStartResult, LOADS, PROBE } from './cold-start.js';
import { benchStart, benchTestRun, type StartResult, type TestRunResult } from './start.js';

/**
 * `npm run bench`: every figure measured side by side with the engine's own speed on the same work, in one run on
 * this machine, and written to BENCHMARKS.md with the ratio beside it. Shared machines are noisy: compare ratios.
 * `--only overhead,cold-start` measures some sections again and keeps the others as the file has them (each
 * section says the date and machine it was measured on).
 */
const ALL_SECTIONS = 'yardstick,payroll,paystubs,overhead,cold-start,start,test';
const { values } = parseArgs({
  options: {
    employees: { type: 'string', default: '10000,25000' },
    'yardstick-sizes': { type: 'string', default: '1000,10000' },
    only: { type: 'string', default: ALL_SECTIONS },
    out: { type: 'string', default: 'BENCHMARKS.md' },
  },
});
const sizes = values.employees!.split(',').map(Number);
const only = new Set(values.only!.split(','));

const ratio = (a: number, b: number) => (a / b).toFixed(2);

function payrollTable(results: PayrollBenchResult[]): string {
  const rows = results.map((r) =>
    [
      r.employees.toLocaleString('en-US'),
      `${ms(r.to202Ms)} (${ratio(r.to202Ms, r.directReadPlusBodyMs)}× of ${ms(r.directReadPlusBodyMs)})`,
      `${ms(r.toCompletedMs)} (${ratio(r.toCompletedMs, r.directWriteMs)}× of ${ms(r.directWriteMs)})`,
      Math.round(r.itemsPerSecond).toLocaleString('en-US'),
      r.peakRssMiB === undefined ? 'n/a' : `${Math.round(r.peakRssMiB)} MiB`,
    ].join(' | '),
  );
  return [
    '| employees | time to 202 (× direct read + body write) | POST to completed (× direct paystub batch-write) | paystubs/s | processor peak RSS |',
    '|---:|---|---|---:|---:|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}

function overheadTable(r: OverheadResult): string {
  const row = (name: string, l: LoadResult, base?: LoadResult) =>
    `| ${name} | ${ms(l.p50)} | ${ms(l.p99)} | ${Math.round(l.throughput)} | ${base ? `+${ms(l.p50 - base.p50)} / +${ms(l.p99 - base.p99)}` : '—'} |`;
  return [
    '| GET /v1/employees/{id}, 32 connections | p50 | p99 | req/s | added p50 / p99 |',
    '|---|---:|---:|---:|---:|',
    row('no rate limit, no audit log', r.api.bare),
    row('with the rate limit', r.api.rateLimited, r.api.bare),
    row('with the rate limit and the audit log line, as deployed', r.api.deployed, r.api.rateLimited),
    row('… and the audit lines stored in the same engine (local stack)', r.api.full, r.api.deployed),
    row('the engine alone: GetItem of the same item', r.engine),
  ].join('\n');
}

const KB = 1024;
/** The cold-start targets: bundle size and module load time. */
const BUNDLE_LIMIT = 600 * KB;
const LOAD_LIMIT_MS = 100;

function coldStartTable(rows: BundleResult[]): string {
  const kb = (bytes: number) => `${(bytes / KB).toFixed(0)} KB`;
  return [
    `| function | loaded at a deployed cold start (index.mjs, its static chunks and the tracer's, no source maps) | of which the AWS SDK | module load, median of ${LOADS} fresh processes | on first use (S3 client, PDF renderer) |`,
    '|---|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.entry} | ${kb(r.bytes)}${r.bytes > BUNDLE_LIMIT ? ' ⚠' : ''} | ${kb(r.sdkBytes)} | ${r.loadMsMedian.toFixed(0)} ms${r.loadMsMedian > LOAD_LIMIT_MS ? ' ⚠' : ''} | ${r.onFirstUse ? `+ ${kb(r.onFirstUse.bytes)}, + ${r.onFirstUse.msMedian.toFixed(0)} ms` : '—'} |`,
    ),
  ].join('\n');
}

function floorTable(floors: ColdStartResult['floors']): string {
  return [
    `| a module that loads only… (built with the same options) | bytes | module load, median of ${LOADS} fresh processes |`,
    '|---|---:|---:|',
    ...floors.map((f) => `| ${f.probe} | ${(f.bytes / KB).toFixed(0)} KB | ${f.loadMsMedian.toFixed(0)} ms |`),
  ].join('\n');
}

/** What the floors leave of the load target, in words: computed, so it stays true when the figures change. */
function floorVerdict(floors: ColdStartResult['floors']): string {
  const ms = (probe: string) => floors.find((f) => f.probe === probe)?.loadMsMedian;
  const [plain, traced, mini] = [ms(PROBE.withZod), ms(PROBE.withTracer), ms(PROBE.withZodMini)];
  if (plain === undefined || traced === undefined || mini === undefined) return '';
  const left = (floor: number) => (floor >= LOAD_LIMIT_MS ? 'nothing' : `${Math.round(LOAD_LIMIT_MS - floor)} ms`);
  return [
    `Of the ${LOAD_LIMIT_MS} ms, these libraries take ${Math.round(plain)} ms with tracing off (what the outside yardstick loads),`,
    `leaving ${left(plain)} for everything else a function loads: the service's code and route schemas, Powertools Logger`,
    `and Metrics, middy, the other clients; deployed, with the tracer, ${Math.round(traced)} ms, leaving ${left(traced)}. Moving`,
    `validation to zod/mini would leave ${left(mini)} with tracing off. The docs function, which reads no table and is not`,
    'traced, is the one function these floors do not bind.',
  ].join('\n');
}

const range = (values: number[], unit: string) => {
  const [low, high] = [Math.round(Math.min(...values)), Math.round(Math.max(...values))];
  return low === high ? `${low} ${unit}` : `${low}–${high} ${unit}`;
};

function coldStartVerdict({ functions: rows, runtimeSdk }: ColdStartResult): string {
  const big = rows.filter((r) => r.bytes > BUNDLE_LIMIT);
  const slow = rows.filter((r) => r.loadMsMedian > LOAD_LIMIT_MS);
  const loads = rows.map((r) => r.loadMsMedian);
  const lazy = rows.filter((r) => r.onFirstUse);
  return [
    `**${big.length === 0 ? 'Met' : 'Missed'}: bundle size** — ${rows.length - big.length} of ${rows.length} functions load within ${BUNDLE_LIMIT / KB} KB at a cold start (${range(
      rows.map((r) => r.bytes / KB),
      'KB',
    )}${big.length ? `; over: ${big.map((r) => `${r.entry} ${Math.round(r.bytes / KB)} KB`).join(', ')}` : ''}), the AWS SDK included (${range(
      rows.map((r) => r.sdkBytes / KB),
      'KB',
    )} of it).`,
    `**${slow.length === 0 ? 'Met' : 'Missed'}: module load** — ${rows.length - slow.length} of ${rows.length} functions load within ${LOAD_LIMIT_MS} ms (median of the medians ${Math.round(median(loads))} ms${slow.length ? `; over: ${slow.map((r) => `${r.entry} ${Math.round(r.loadMsMedian)} ms`).join(', ')}` : ''}).`,
    ...(lazy.length
      ? [
          `Imported on first use, not at load: ${lazy.length} functions load ${range(
            lazy.map((r) => r.onFirstUse!.bytes / KB),
            'KB',
          )} more then, in ${range(
            lazy.map((r) => r.onFirstUse!.msMedian),
            'ms',
          )} (last column): the S3 client on the first object operation (shared/adapters/object-store.ts), the PDF renderer on get-paystub's first PDF request.`,
        ]
      : []),
    `The alternative measured beside it, the SDK taken unbundled from node_modules as the Lambda runtime provides it: ${runtimeSdk.map((r) => `${r.entry} loads in ${Math.round(r.loadMsMedian)} ms`).join(', ')}.`,
  ].join('\n\n');
}

function startTable(r: StartResult): string {
  return `${[
    '| `npm start` | time to the ready line |',
    '|---|---:|',
    `| first run (empty data folder: table, queues, bucket, certificate created) | ${ms(r.firstMs)} |`,
    `| later runs, median of ${r.laterMs.length} | ${ms(r.laterMedianMs)} (the stack's own part ${ms(r.laterStackMs)}) |`,
    `| later runs, each | ${r.laterMs.map((x) => ms(x)).join(', ')} |`,
  ].join('\n')}\n\n**${r.laterMedianMs <= 5_000 ? 'Met' : 'Missed'}** (target ≤ 5 s after the first run).`;
}

function overheadVerdict(r: OverheadResult): string {
  const pct = (l: LoadResult) => Math.round((l.throughput / r.engine.throughput) * 100);
  const share = r.api.deployed.throughput / r.engine.throughput;
  const tail = r.api.deployed.p99 / r.api.deployed.p50;
  return [
    `As deployed (token cache, rate limit, audit line), the API sustains **${pct(r.api.deployed)}%** of the engine's GetItem throughput at the same concurrency (target ≥ 40%: **${share >= 0.4 ? 'met' : 'missed'}**); its p99 is ${ratio(r.api.deployed.p99, r.api.deployed.p50)}× its p50 (target ≤ 3×: **${tail <= 3 ? 'met' : 'missed'}**).`,
    `With the local stack also writing every audit line into the engine being measured it is ${pct(r.api.full)}% (p99 ${ratio(r.api.full.p99, r.api.full.p50)}× p50); with neither rate limit nor audit log, ${pct(r.api.bare)}%.`,
  ].join(' ');
}

function payrollVerdict(results: PayrollBenchResult[]): string {
  const ten = results.find((r) => r.employees === 10_000);
  const max = results.find((r) => r.employees === 25_000);
  const parts = [
    ten &&
      `10,000 employees: 202 at ${ratio(ten.to202Ms, ten.directReadPlusBodyMs)}× (target ≤ 1.5×: ${ten.to202Ms <= 1.5 * ten.directReadPlusBodyMs ? 'met' : 'missed'}), completed at ${ratio(ten.toCompletedMs, ten.directWriteMs)}× (target ≤ 2×: ${ten.toCompletedMs <= 2 * ten.directWriteMs ? 'met' : 'missed'})`,
    max &&
      `25,000 employees: processor peak ${max.peakRssMiB === undefined ? 'n/a' : `${Math.round(max.peakRssMiB)} MiB`} (target < 512 MB: ${max.peakRssMiB !== undefined && max.peakRssMiB * 2 ** 20 < 512e6 ? 'met' : 'missed'})`,
  ].filter(Boolean);
  return parts.length ? `${parts.join('; ')}.` : '';
}

/** The sections of an earlier BENCHMARKS.md, by heading, to keep those this run does not measure. */
function earlierSections(path: string): Map<string, string> {
  const sections = new Map<string, string>();
  if (!existsSync(path)) return sections;
  const parts = readFileSync(path, 'utf8')
    .split(/^(?=## )/m)
    .slice(1);
  for (const part of parts) sections.set(part.split('\n', 1)[0]!, part.trimEnd());
  return sections;
}

const measuredOn = () => `_Measured ${new Date().toISOString().slice(0, 10)} on ${machine()}._`;

function paystubTable(r: PaystubBenchResult): string {
  return [
    '| query | API p50 | API p99 | API req/s | engine p50 | engine p99 | engine req/s | API p50 ÷ engine p50 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (row) =>
        `| ${row.query} | ${ms(row.api.p50)} | ${ms(row.api.p99)} | ${Math.round(row.api.throughput)} | ${ms(row.engine.p50)} | ${ms(row.engine.p99)} | ${Math.round(row.engine.throughput)} | ${ratio(row.api.p50, row.engine.p50)} |` +
        (row.api.errors + row.engine.errors > 0 ? ` (${row.api.errors + row.engine.errors} errors)` : ''),
    ),
  ].join('\n');
}

/**
 * The outside yardstick (an external harness kept beside this repository, not in it): it starts \`npm start\` as a
 * user does and measures the bare DynamoDB Local engine (in memory, one table, no index) doing the same work in
 * the same run. Its own table and its JSON are recorded as it prints them.
 */
const YARDSTICK = join('..', 'shared', 'yardstick', 'perf.mjs');

function runYardstick(): string {
  if (!existsSync(YARDSTICK)) return `_Not run: the external harness (${YARDSTICK}) is not on this machine._`;
  const args = [YARDSTICK, '--project', '.', '--sizes', values['yardstick-sizes']!];
  progress(`yardstick: node ${args.join(' ')}`);
  const out = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, stdio: 'pipe' });
  const lines = out.stdout.trimEnd().split('\n');
  const json = lines.at(-1) ?? '';
  const table = lines.filter((l) => !l.startsWith('#') && !l.startsWith('{'));
  return [
    `\`node ${args.join(' ')}\` (exit ${out.status}). Its denominators, as it defines them: **POST → completed** beside`,
    'a BatchWrite of N paystub-sized items (~600 B), 25 per request, 8 in flight; **POST → 202** beside a BatchGet of',
    'N employee-sized items (~360 B), 100 keys per request, 8 in flight; **GET /v1/employees/{id}** beside GetItem at',
    'the same concurrency (32); all on a bare DynamoDB Local in memory with one table and no index, in the same run.',
    '',
    '```',
    ...table,
    '```',
    '',
    "<details><summary>The yardstick's JSON</summary>",
    '',
    '```json',
    json,
    '```',
    '',
    '</details>',
  ].join('\n');
}

async function main() {
  progress(`machine: ${machine()}`);
  const earlier = earlierSections(values.out!);
  const sections: string[] = [];
  /** A section measured now, or the same heading as the earlier file has it. */
  const section = (heading: string, body: string | undefined) =>
    sections.push(
      body === undefined
        ? (earlier.get(heading) ?? `${heading}\n\n_not run yet_`)
        : `${heading}\n\n${measuredOn()}\n\n${body.trim()}`,
    );

  const yardstick = only.has('yardstick') ? runYardstick() : undefined;
  let results: PayrollBenchResult[] | undefined;
  let paystubs: PaystubBenchResult | undefined;
  if (only.has('payroll') || only.has('paystubs')) {
    progress('starting a local stack (own data folder, free ports)');
    const stack = await startLocalStack({ env: { PAYROLL_LOCAL_WORKERS: 'external' } });
    try {
      const org = await stack.createOrganization('Bench Co');
      if (only.has('payroll')) {
        results = [];
        for (const [i, n] of sizes.entries()) {
          // A fresh processor process per run, as a Lambda container would be: its peak memory is the run's alone.
          const workers = await startWorkersProcess(stack);
          try {
            results.push(await benchPayroll(stack, org.token, org.organization_id, n, i, workers.pid));
          } finally {
            await workers.stop();
          }
        }
      }
      if (only.has('paystubs')) {
        const stubOrg = await stack.createOrganization('Paystub Bench Co');
        paystubs = await benchPaystubs(stack, stubOrg.token, stubOrg.organization_id);
      }
    } finally {
      await stack.stop();
    }
  }
  const overhead = only.has('overhead') ? await benchOverhead() : undefined;
  const cold = only.has('cold-start') ? await benchColdStart() : undefined;
  const start = only.has('start') ? await benchStart() : undefined;
  const tests: TestRunResult | undefined = only.has('test') ? await benchTestRun() : undefined;

  section('## The outside yardstick', yardstick);
  const analysis = readFileSync(join('bench', 'analysis.md'), 'utf8').trim();
  sections.push(analysis);

  section(
    '## Payroll throughput',
    results &&
      `
A payroll submitted over HTTPS to the local stack (\`npm start\`'s own code: HTTPS adapter, handlers, queue
worker, DynamoDB Local, fauxqs), followed until \`completed\`. Employees are seeded directly in the table.

- **time to 202**: POST /v1/payroll until the answer, beside a direct batched read of the same employee items plus
  the write of a body of the same size (the storage work the submission cannot avoid). Target ≤ 1.5×.
- **POST to completed**: until GET /v1/payroll/{id} says \`completed\` (NACHA file written, every paystub stored),
  beside the engine batch-writing the same number of paystub-sized items directly (8 requests of 25 in flight).
  Target ≤ 2×.
- **processor peak RSS**: the high-water mark of the queue worker process (\`npm run workers\`, the same handler
  the processor Lambda runs), started fresh for each run. It polls with 4 pollers of up to 10 messages, so it holds
  more chunks at once than one Lambda invocation (one batch of 10): an upper bound. Target < 512 MB at 25,000.

${payrollTable(results)}

${payrollVerdict(results)}`,
  );

  section(
    '## Paystub reads',
    paystubs &&
      `
\`GET /v1/paystubs\` over HTTPS (keep-alive) on an organization holding ${paystubs.paystubs.toLocaleString('en-US')} paystubs (2,000
employees × 50 biweekly runs), 32 concurrent connections, first page (50 paystubs), after a warm-up. Beside it, the
bare engine running the same index query (51 items) through the SDK at the same concurrency: the bound no design
can beat on this engine. Each request of the API also authenticates (one read) and checks that the runs are finished.

${paystubTable(paystubs)}`,
  );

  section(
    '## Request overhead: rate limit and audit log',
    overhead &&
      `
\`GET /v1/employees/{id}\` over HTTPS (keep-alive) at 32 concurrent connections, 3,000 requests after a warm-up,
on four local stacks that differ only in what is measured. The token is verified once and cached (5 s bound); the
rate limit is GCRA state in DynamoDB, checked through a per-container reserve (docs/api.md, "Rate limits"); the audit
line is what a deployed function writes to its log (CloudWatch Logs delivers it to the ingest function, which
writes the table elsewhere). The last row adds what only the local stack does: an in-process batcher writing every
audit line into the same DynamoDB Local the reads are measured on. "Added" compares each row with the one above it.

${overheadTable(overhead)}

${overheadVerdict(overhead)}

Why the last row is lower: on this 2-core machine the API, the load generator and DynamoDB Local share the cores,
and DynamoDB Local spends as much CPU writing an audit item as reading the employee (measured: ~0.9 ms of engine
CPU each), so storing one line per request halves what is left for the reads. Deployed, that write happens in
another function against a table that scales on its own; the request's cost is the log line above.`,
  );

  section(
    '## Cold start',
    cold &&
      `
Each function bundled exactly as the CDK app deploys it (infra/bundling/bundle-function.ts: esbuild, ESM, minified,
target node22, source maps beside), largest first, and the time its module takes to load in a fresh Node process in a folder with no
node_modules, with the variables its deployment sets and those Lambda sets: each function builds its clients at module
scope, and tracing is on, so Powertools Tracer and the X-Ray SDK load at init as they do deployed (the outside
yardstick loads the same assets with tracing off). Targets: ≤ ${BUNDLE_LIMIT / KB} KB, ≤ ${LOAD_LIMIT_MS} ms.

The AWS SDK is in the bundles, the clients the lock file pins, tree-shaken to what each function uses; modules the
code imports on first use (the S3 client, the PDF renderer) are split into chunks of the same asset. Every asset is
self-contained and runs with plain \`node\`; the benchmark builds it with the function CDK's local bundling calls.

${coldStartTable(cold.functions)}

${coldStartVerdict(cold)}

What no function that reads the table can load faster than, measured in the same rounds: a module that builds only
a DynamoDB document client (every function but docs does), with zod (every API function validates with it), and with
the tracer every deployed function but docs loads (issue 21's traced AWS calls). The gap between these floors and
the ${LOAD_LIMIT_MS} ms target is what is left for the code of the service itself.

${floorTable(cold.floors)}

${floorVerdict(cold.floors)}

Why the SDK in the bundle rather than the runtime's: it runs the client versions the lock file pins and the tests
exercised, never changes under a deployed function, and loads faster (the figures above). Credentials come from the
environment only (the default chain's SSO, STS and profile code was ~130 KB), and the audit ingest function validates
its CloudWatch Logs payload with its own schema instead of Powertools' parser, whose by-name zod import pulled all of
zod into the bundle.
`,
  );

  section(
    '## Local stack start',
    start &&
      `
\`npm start\` as a developer types it, from the spawn of npm to the stack's ready line (then stopped with
Ctrl-C), on one data folder: the first run, then ${start.laterMs.length} restarts. "The stack's own part" is what the stack
prints in its ready line: from its first line of code to listening, without npm's and tsx's own start.

${startTable(start)}`,
  );

  section(
    '## Test suite',
    tests &&
      `
\`npm test\` in this working copy (type check, unit, integration on the real engines, infrastructure, end-to-end
over HTTPS), with the machine otherwise idle. CI runs it on a fresh clone after \`npm ci\`, with empty caches (the
TypeScript transforms, the cfn-guard rules): there it takes longer, so a figure close to the target here can be
over it there.

| \`npm test\` | wall time | result |
|---|---:|---|
| whole suite | ${ms(tests.ms)} | ${tests.passed ? 'passed' : '**failed**'}: ${tests.summary.join('; ')} |

**${tests.ms < 600_000 ? 'Met' : 'Missed'}** (target < 10 minutes on 2 cores).`,
  );

  const report = `# Benchmarks

Produced by \`npm run bench\` (\`--only ${ALL_SECTIONS}\` measures some sections
again and keeps the rest). Every figure is measured in the same run beside the storage engine's own speed on the same
work, because these machines are shared and noisy: the ratios are what to compare. Each section names the date
and machine it was measured on.

${sections.join('\n\n')}
`;
  writeFileSync(values.out!, report);
  progress(`wrote ${values.out}`);
  process.stdout.write(`${report}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
