import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type Assembly,
  DEFAULT_CDK_OUT,
  type DeployedFunction,
  ensureAssembly,
  findFunction,
} from './invoke-assembly.js';
import { describeEnvironment, localTarget, samEnvVars, samTemplates } from './invoke-environment.js';
import { invokeFunction, loadEvent, prepareEvent, samplesOf } from './invoke-harness.js';

/**
 * `npm run invoke -- <function> [--event <file>]`: runs one function as CDK built it (its asset in cdk.out, with
 * the environment its template gives it) against the running local stack, and prints its logs, its REPORT line
 * and its result. See docs/invoke.md.
 */
const USAGE = `Usage:
  npm run invoke                                   list the functions and their sample events
  npm run invoke -- <function> [options]           invoke one function once, in a fresh process
  npm run invoke -- --sam-env-vars <file> [--sam-template]   write what \`sam local invoke\` needs (docs/invoke.md)

<function>: a name (employees, payroll, returns, paystubs, webhooks, admin, docs, disbursements, bank-link-api,
processor, sweeper, deliverer, bank-link, audit-ingest) or a logical id (EmployeesFunction953319AA).

Options:
  --event <file|name|->  the event: a file, a sample's name (getEmployee → events/<function>/getEmployee.json)
                         or - for stdin; default: the function's first sample
  --token <token>        fills "Bearer <token>" in an API event (default: $PAYROLL_TOKEN, then $TOKEN)
  --param <name=value>   sets a path parameter of an API event (repeatable): --param id=emp_…
  --json                 one JSON object on stdout: result, error, logs, timings
  --show-env             print the function's environment first (secrets hidden) and where each value came from
  --print-event          print the event, filled in (token, parameters), and stop: for sam local invoke -e -
  --no-synth             use cdk.out as it is (default: synthesize when it is missing or older than the sources)
  --synth                synthesize first in any case
  --cdk-out <dir>        the cloud assembly (default: cdk.out)
  --data-dir <dir>       the local stack's data folder (default: $PAYROLL_DATA_DIR or .data)
  --sam-env-vars <file>  write the --env-vars JSON for sam local invoke, from the running local stack
  --sam-template         write <cdk.out>/<stack>.local.template.json: the templates with each function declaring
                         those variables (SAM only sets variables a template declares)`;

class UsageError extends Error {}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        event: { type: 'string', short: 'e' },
        token: { type: 'string' },
        param: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        'show-env': { type: 'boolean' },
        'print-event': { type: 'boolean' },
        'no-synth': { type: 'boolean' },
        synth: { type: 'boolean' },
        'cdk-out': { type: 'string' },
        'data-dir': { type: 'string' },
        'sam-env-vars': { type: 'string' },
        'sam-template': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`npm run invoke: ${(err as Error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
})();

const err = (text: string) => process.stderr.write(text);
/** A path given on the command line: npm runs scripts from the package root, INIT_CWD is where it was typed. */
const given = (path: string) => resolve(process.env.INIT_CWD ?? process.cwd(), path);
const dataDirOption = () => (values['data-dir'] ? given(values['data-dir']) : undefined);
/** A path as typed from here when it is under the working directory, else absolute. */
const show = (path: string) => {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : rel;
};

function listFunctions(assembly: Assembly): void {
  const rows = assembly.functions.map((f) => [
    f.name,
    f.logicalId,
    f.stack.name,
    `${f.memoryMb} MB, ${f.timeoutSeconds} s`,
    show(`${f.assetDir}/index.mjs`),
  ]);
  const header = ['function', 'logical id', 'stack', 'memory, timeout', 'asset'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const out = [`Functions in ${show(assembly.dir)}:`, '', line(header), ...rows.map(line), '', 'Sample events:'];
  for (const f of assembly.functions) {
    const samples = samplesOf(f).map((s, i) => (i === 0 ? `${s.name} (default)` : s.name));
    out.push(`  ${f.name.padEnd(widths[0]!)}  ${samples.join(', ') || '(none)'}`);
  }
  out.push('', 'Invoke one: npm run invoke -- <function> [--event <name|file>] [--token <token>] [--param id=…]');
  process.stdout.write(`${out.join('\n')}\n`);
}

function parseParams(list: readonly string[] = []): Record<string, string> {
  return Object.fromEntries(
    list.map((p) => {
      const at = p.indexOf('=');
      if (at <= 0) throw new UsageError(`--param takes name=value, got "${p}"`);
      return [p.slice(0, at), p.slice(at + 1)];
    }),
  );
}

async function invokeOne(assembly: Assembly, fn: DeployedFunction): Promise<number> {
  const spec = values.event;
  // A file typed relative to where npm was run, else a sample's name (or -).
  const { event: raw, source } = loadEvent(fn, spec && spec !== '-' && existsSync(given(spec)) ? given(spec) : spec);
  const token = values.token ?? process.env.PAYROLL_TOKEN ?? process.env.TOKEN;
  const { event, warnings } = prepareEvent(raw, { token, params: parseParams(values.param) });
  if (values['print-event']) {
    for (const w of warnings) err(`warning: ${w}\n`);
    process.stdout.write(`${JSON.stringify(event, null, 2)}\n`);
    return 0;
  }
  const target = localTarget(dataDirOption());
  const json = values.json === true;
  if (!json) {
    err(
      `${fn.name}: ${fn.stack.name} ${fn.logicalId} (${fn.runtime}, ${fn.memoryMb} MB, ${fn.timeoutSeconds} s)\n` +
        `  asset ${show(fn.assetDir)}/index.mjs · event ${source.startsWith('/') ? show(source) : source} · local stack ${show(target.dir)}\n`,
    );
    for (const w of warnings) err(`  warning: ${w}\n`);
  }
  const invocation = await invokeFunction({
    assembly,
    fn,
    target,
    event,
    ...(!json && {
      onStart: ({ requestId, environment, problems }) => {
        if (values['show-env']) err(`Environment:\n${describeEnvironment(environment).join('\n')}\n`);
        for (const p of problems) err(`  warning: unresolved ${p}\n`);
        err(`START RequestId: ${requestId} Version: $LATEST\n`);
      },
      onLog: (line) => err(`${line.text}\n`),
    }),
  });
  if (!json) {
    if (invocation.error)
      err(
        `${new Date().toISOString()}\t${invocation.requestId}\tERROR\tInvoke Error \t${JSON.stringify(invocation.error)}\n`,
      );
    err(`END RequestId: ${invocation.requestId}\n${invocation.report}\n`);
    if (invocation.maxMemoryMb !== undefined && invocation.maxMemoryMb > fn.memoryMb)
      err(`  warning: ${invocation.maxMemoryMb} MB used, more than the function's ${fn.memoryMb} MB\n`);
    process.stdout.write(`${JSON.stringify(invocation.ok ? invocation.result : invocation.error, null, 2)}\n`);
  } else {
    process.stdout.write(
      `${JSON.stringify({
        function: fn.name,
        logical_id: fn.logicalId,
        stack: fn.stack.name,
        asset: fn.assetDir,
        event: source,
        request_id: invocation.requestId,
        ok: invocation.ok,
        result: invocation.result,
        error: invocation.error,
        timed_out: invocation.timedOut,
        init_ms: invocation.initMs,
        duration_ms: invocation.durationMs,
        max_memory_mb: invocation.maxMemoryMb,
        memory_mb: fn.memoryMb,
        report: invocation.report,
        logs: invocation.logs.map((l) => l.text),
        warnings: [...warnings, ...invocation.problems],
      })}\n`,
    );
  }
  return invocation.ok ? 0 : 1;
}

function writeSam(assembly: Assembly): void {
  const target = localTarget(dataDirOption());
  const write = (file: string, text: string) => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text, { mode: 0o600 });
  };
  if (values['sam-env-vars']) {
    const file = given(values['sam-env-vars']);
    write(file, `${JSON.stringify(samEnvVars(assembly, target), null, 2)}\n`);
    err(`Wrote ${show(file)}: the variables of ${assembly.functions.length} functions, by logical id\n`);
  }
  if (values['sam-template']) {
    for (const file of samTemplates(assembly, target, write)) err(`Wrote ${show(file)}\n`);
  }
}

async function main(): Promise<number> {
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`One function at a time, got ${positionals.join(' ')}`);
  if (values.synth && values['no-synth']) throw new UsageError('--synth and --no-synth together');
  const assembly = await ensureAssembly({
    dir: values['cdk-out'] ? given(values['cdk-out']) : DEFAULT_CDK_OUT,
    synth: values.synth ? 'always' : values['no-synth'] ? 'never' : 'auto',
  });
  if (values['sam-env-vars'] || values['sam-template']) {
    writeSam(assembly);
    if (positionals.length === 0) return 0;
  }
  if (positionals.length === 0) {
    listFunctions(assembly);
    return 0;
  }
  return invokeOne(assembly, findFunction(assembly, positionals[0]!));
}

/** Exits once stdout and stderr are flushed: a pipe takes a large result (the OpenAPI document) in several writes. */
const exit = (code: number) => process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));

main().then(exit, (e: unknown) => {
  process.stderr.write(`npm run invoke: ${e instanceof Error ? e.message : String(e)}\n`);
  if (e instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
  exit(e instanceof UsageError ? 2 : 1);
});
