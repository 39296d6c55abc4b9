import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { FUNCTIONS } from '../shared/api/routes.js';
import { REPO_ROOT } from '../infra/bundling/options.js';
import { ALL_HANDLERS, apiHandlerOf, WORKER_HANDLERS } from '../infra/lambda-functions.js';

/**
 * The cloud assembly `cdk synth` writes (cdk.out): its stacks' templates and, for each Lambda function of the
 * service, the asset CDK built for it. The harness (scripts/invoke.ts) runs those assets, not the TypeScript
 * sources, so what it exercises is what deploys.
 */

/** A resource's properties, as far as the harness reads them (a Lambda function's and a log group's). */
export interface ResourceProperties {
  Handler?: string;
  Runtime?: string;
  MemorySize?: number;
  Timeout?: number;
  Environment?: { Variables?: Record<string, unknown> };
  LoggingConfig?: { LogGroup?: { Ref?: string } };
  LogGroupName?: unknown;
  [property: string]: unknown;
}

/** A CloudFormation template, as far as the harness reads it. */
export interface Template {
  Resources?: Record<string, { Type: string; Properties?: ResourceProperties; Metadata?: Record<string, unknown> }>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
}

export interface AssemblyStack {
  /** The stack's name, e.g. `Payroll-sandbox-dev-Api`. */
  name: string;
  templateFile: string;
  template: Template;
}

/** One of the service's Lambda functions as the template deploys it. */
export interface DeployedFunction {
  /** The name `npm run invoke` takes: `employees`, `processor`, `audit-ingest`… */
  name: string;
  /** Other names accepted for it: the construct key (`auditIngest`) and the entry (`audit/ingest-audit-log`). */
  aliases: string[];
  /** Its entry under functions/, without extension (`api/employees`). */
  entry: string;
  logicalId: string;
  stack: AssemblyStack;
  /** `aws:cdk:path`, e.g. `Payroll-sandbox-dev-Api/EmployeesFunction/Function/Resource`. */
  cdkPath: string;
  /** The asset directory CDK built (`<cdk.out>/asset.<hash>`), from the `aws:asset:path` metadata. */
  assetDir: string;
  /** `index.handler`: module `index` of the asset, export `handler`. */
  handler: string;
  runtime: string;
  memoryMb: number;
  timeoutSeconds: number;
  /** The template's `Environment.Variables`, CloudFormation tokens and all. */
  environment: Record<string, unknown>;
  /** The log group's name when the template names it (the API functions' `/payroll/<stack>/routes/…`). */
  logGroupName?: string;
}

export interface Assembly {
  dir: string;
  stacks: AssemblyStack[];
  functions: DeployedFunction[];
}

export const DEFAULT_CDK_OUT = join(REPO_ROOT, 'cdk.out');

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Each entry under functions/ with the name the harness gives it and the other names it accepts. */
function namesOf(entry: string): { name: string; aliases: string[] } {
  const api = FUNCTIONS.find((f) => apiHandlerOf(f.name) === entry);
  if (api) return { name: api.name, aliases: [entry] };
  const worker = Object.entries(WORKER_HANDLERS).find(([, e]) => e === entry);
  if (worker) return { name: kebab(worker[0]), aliases: [worker[0], entry] };
  return { name: entry, aliases: [] };
}

/**
 * The entry an asset was built from: its source map lists the sources bundled into index.mjs, and exactly one of
 * them is an entry of the CDK app (functions never import one another). Undefined for assets that are not the
 * service's (CDK's own custom resource handlers).
 */
function entryOf(assetDir: string): string | undefined {
  const map = ['index.mjs.map', 'index.js.map'].map((f) => join(assetDir, f)).find(existsSync);
  if (!map) return undefined;
  const { sources } = JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] };
  const found = ALL_HANDLERS.filter((h) => sources.some((s) => s.replace(/\\/g, '/').endsWith(`functions/${h}.ts`)));
  return found.length === 1 ? found[0] : undefined;
}

/** Reads the stacks of a synthesized assembly and the service's functions in them. */
export function readAssembly(dir: string = DEFAULT_CDK_OUT): Assembly {
  const manifestFile = join(dir, 'manifest.json');
  if (!existsSync(manifestFile))
    throw new Error(`No cloud assembly in ${dir}: run \`npx cdk synth\` (or omit --no-synth)`);
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as {
    artifacts?: Record<string, { type: string; displayName?: string; properties?: { templateFile?: string } }>;
  };
  const stacks: AssemblyStack[] = Object.entries(manifest.artifacts ?? {})
    .filter(([, a]) => a.type === 'aws:cloudformation:stack' && a.properties?.templateFile)
    .map(([id, a]) => {
      const templateFile = join(dir, a.properties!.templateFile!);
      return { name: a.displayName ?? id, templateFile, template: JSON.parse(readFileSync(templateFile, 'utf8')) };
    });
  const functions: DeployedFunction[] = [];
  for (const stack of stacks) {
    for (const [logicalId, resource] of Object.entries(stack.template.Resources ?? {})) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const assetPath = resource.Metadata?.['aws:asset:path'];
      if (typeof assetPath !== 'string') continue;
      const assetDir = resolve(dir, assetPath);
      const entry = existsSync(assetDir) ? entryOf(assetDir) : undefined;
      if (!entry) continue;
      const props: ResourceProperties = resource.Properties ?? {};
      const logGroupRef = props.LoggingConfig?.LogGroup?.Ref;
      const logGroupName = logGroupRef ? stack.template.Resources?.[logGroupRef]?.Properties?.LogGroupName : undefined;
      functions.push({
        ...namesOf(entry),
        entry,
        logicalId,
        stack,
        cdkPath: String(resource.Metadata?.['aws:cdk:path'] ?? logicalId),
        assetDir,
        handler: String(props.Handler ?? 'index.handler'),
        runtime: String(props.Runtime ?? 'nodejs22.x'),
        memoryMb: Number(props.MemorySize ?? 128),
        timeoutSeconds: Number(props.Timeout ?? 3),
        environment: props.Environment?.Variables ?? {},
        ...(typeof logGroupName === 'string' && { logGroupName }),
      });
    }
  }
  // In the order the app declares its entries: the API functions by resource, then the workers.
  functions.sort((a, b) => ALL_HANDLERS.indexOf(a.entry) - ALL_HANDLERS.indexOf(b.entry));
  return { dir, stacks, functions };
}

/** A function by its name, one of its aliases or its logical id (exact, or the id without CDK's hash suffix). */
export function findFunction(assembly: Assembly, query: string): DeployedFunction {
  const q = query.toLowerCase();
  const match =
    assembly.functions.find((f) => f.name === q || f.aliases.some((a) => a.toLowerCase() === q)) ??
    assembly.functions.find((f) => f.logicalId.toLowerCase() === q) ??
    assembly.functions.find((f) => f.logicalId.toLowerCase().replace(/[0-9a-f]{8}$/i, '') === q);
  if (!match) {
    throw new Error(
      `No function "${query}" in ${assembly.dir}; one of: ${assembly.functions.map((f) => f.name).join(', ')}`,
    );
  }
  return match;
}

/**
 * The files whose change can change the assembly: what cdk.json's `watch.include` names (the CDK app, the
 * functions, the shared code), cdk.json itself, the lock file and the files routes read at run time.
 */
function sourceFiles(): string[] {
  const cdkJson = join(REPO_ROOT, 'cdk.json');
  const include = (JSON.parse(readFileSync(cdkJson, 'utf8')) as { watch?: { include?: string[] } }).watch?.include ?? [
    'infra/**',
    'functions/**',
    'shared/**',
  ];
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
      d.name === 'node_modules' ? [] : d.isDirectory() ? walk(join(dir, d.name)) : [join(dir, d.name)],
    );
  const roots = include.map((pattern) => join(REPO_ROOT, pattern.split('*')[0]!)).filter(existsSync);
  const routeFiles = FUNCTIONS.flatMap((f) => f.routes.flatMap((r) => r.files ?? [])).map((f) => join(REPO_ROOT, f));
  return [
    ...roots.flatMap((r) => (statSync(r).isDirectory() ? walk(r) : [r])),
    cdkJson,
    join(REPO_ROOT, 'package-lock.json'),
    join(REPO_ROOT, 'tsconfig.json'),
    ...routeFiles,
  ].filter(existsSync);
}

/** Why the assembly in `dir` must be synthesized again, or undefined when it is newer than every source. */
export function stalenessOf(dir: string): string | undefined {
  const manifest = join(dir, 'manifest.json');
  if (!existsSync(manifest)) return `${relative(REPO_ROOT, dir) || dir} has no cloud assembly`;
  const built = statSync(manifest).mtimeMs;
  let newest: { file: string; at: number } | undefined;
  for (const file of sourceFiles()) {
    const at = statSync(file).mtimeMs;
    if (at > built && (!newest || at > newest.at)) newest = { file, at };
  }
  return newest && `${relative(REPO_ROOT, newest.file)} changed after the last synth`;
}

/** `cdk synth --quiet --output <dir>`, the app cdk.json names; its progress goes to `log`. */
export function synthesize(dir: string, log: (text: string) => void = (t) => process.stderr.write(t)): Promise<void> {
  const cdk = join(REPO_ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk');
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [cdk, 'synth', '--quiet', '--output', dir], {
      cwd: REPO_ROOT,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (d: Buffer) => {
      output += d.toString();
      log(d.toString());
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', fail);
    child.on('close', (code) =>
      code === 0 ? done() : fail(new Error(`cdk synth exited with ${code}:\n${output.slice(-4000)}`)),
    );
  });
}

export interface EnsureOptions {
  dir?: string;
  /** 'auto': synthesize when the assembly is missing or older than its sources; 'never' (`--no-synth`); 'always'. */
  synth?: 'auto' | 'always' | 'never';
  log?: (text: string) => void;
}

/** The assembly, synthesized first when needed. */
export async function ensureAssembly(options: EnsureOptions = {}): Promise<Assembly> {
  const dir = resolve(options.dir ?? DEFAULT_CDK_OUT);
  const log = options.log ?? ((t: string) => process.stderr.write(t));
  const mode = options.synth ?? 'auto';
  const reason = mode === 'always' ? 'asked to' : mode === 'auto' ? stalenessOf(dir) : undefined;
  if (reason) {
    log(`Synthesizing into ${relative(process.cwd(), dir) || dir} (${reason})…\n`);
    const started = performance.now();
    await synthesize(dir, log);
    log(`Synthesized in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
  const assembly = readAssembly(dir);
  if (assembly.functions.length === 0) throw new Error(`${dir} holds none of the service's functions`);
  return assembly;
}
