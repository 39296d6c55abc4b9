import { randomBytes } from 'node:crypto';
import { delimiter, dirname, join } from 'node:path';
import {
  dataDir,
  handlerEnvironment,
  isAlive,
  type LocalSecrets,
  localSecrets,
  readState,
  type StackState,
} from '../local/stack-state.js';
import { pascal } from '../infra/names.js';
import { QUEUE_DEFINITIONS } from '../shared/data/table-definition.js';
import type { Assembly, AssemblyStack, DeployedFunction } from './invoke-assembly.js';

/**
 * The environment a function runs with under the harness: the variables its template gives it, each CloudFormation
 * token replaced by what it names in the running local stack (table, bucket, queue URLs), plus what the local stack
 * gives every handler to reach its engines (local/stack-state.ts `handlerEnvironment`) and what Lambda's runtime
 * sets itself (region, function name, memory, log group…).
 */

/** The running local stack, found through its data folder as the admin CLI finds it. */
export interface LocalTarget {
  dir: string;
  state: StackState;
  secrets: LocalSecrets;
}

export function localTarget(dir: string = dataDir()): LocalTarget {
  const state = readState(dir);
  if (!state || !isAlive(state.pid)) {
    throw new Error(
      `No local stack is running from ${dir}: start it with \`npm start\` (the same PAYROLL_DATA_DIR), or pass --data-dir`,
    );
  }
  return { dir, state, secrets: localSecrets(dir) };
}

/**
 * Where a variable's value came from: the template as written, a token resolved to the local stack's value, a
 * local stand-in for a service the local stack does not run, or the harness itself.
 */
export type Origin = 'template' | 'resolved' | 'local stand-in' | 'local engines' | 'runtime';

export interface Variable {
  value: string;
  origin: Origin;
  /** What the template said, for a resolved token or a stand-in (`Fn::ImportValue Payroll-…:ExportsOutputRefTable…`). */
  from?: string;
}

export type Environment = Record<string, Variable>;

/** Values the harness hides when it prints an environment. */
export const SECRET_VARIABLES = new Set([
  'PAYROLL_LOCAL_MASTER_KEY',
  'PAYROLL_SIGNING_SECRET',
  'AWS_SECRET_ACCESS_KEY',
]);

/** The account id a local ARN carries (the local engines accept any). */
const LOCAL_ACCOUNT = '000000000000';

/** What a token resolves to: a value, or a service the local stack stands in for. */
type Resolved = { value: string } | { standIn: 'kms-key' | 'secret' } | { unresolved: string };

const describe = (token: unknown) => {
  const [fn, arg] = Object.entries(token as object)[0] ?? ['?', undefined];
  return `${fn} ${typeof arg === 'string' ? arg : JSON.stringify(arg)}`;
};

/**
 * The local stand-ins for the two services the local stack does not run, by the variable the local stack sets
 * instead (shared/config/env.ts reads either): KMS → a master key in the data folder; Secrets Manager → the
 * secret's value itself.
 */
const STAND_INS = { 'kms-key': 'PAYROLL_LOCAL_MASTER_KEY', secret: 'PAYROLL_SIGNING_SECRET' } as const;

function resourceValue(stack: AssemblyStack, logicalId: string, attribute: string, state: StackState): Resolved {
  const resource = stack.template.Resources?.[logicalId];
  if (!resource) return { unresolved: `${stack.name} has no resource ${logicalId}` };
  const path = String(resource.Metadata?.['aws:cdk:path'] ?? '');
  const arn = (service: string, rest: string) => `arn:aws:${service}:${state.region}:${LOCAL_ACCOUNT}:${rest}`;
  switch (resource.Type) {
    case 'AWS::DynamoDB::Table':
      return { value: attribute === 'Arn' ? arn('dynamodb', `table/${state.table_name}`) : state.table_name };
    case 'AWS::S3::Bucket':
      return { value: attribute === 'Arn' ? `arn:aws:s3:::${state.bucket}` : state.bucket };
    case 'AWS::SQS::Queue': {
      // The local queues are made from the same definitions as the stack's (QueueWithDlq under pascal(name)).
      const found = Object.entries(QUEUE_DEFINITIONS).find(([, def]) => path.includes(`/${pascal(def.name)}/`));
      if (!found) return { unresolved: `no local queue for ${path}` };
      const key = (path.includes('/DeadLetter/') ? `${found[0]}_dlq` : found[0]) as keyof StackState['queues'];
      const url = state.queues[key];
      const name = url.split('/').pop()!;
      return { value: attribute === 'Arn' ? arn('sqs', name) : attribute === 'QueueName' ? name : url };
    }
    case 'AWS::Logs::LogGroup': {
      const named = resource.Properties?.LogGroupName;
      const name = typeof named === 'string' ? named : `/aws/lambda/${stack.name}-${logicalId}`;
      return { value: attribute === 'Arn' ? arn('logs', `log-group:${name}:*`) : name };
    }
    case 'AWS::KMS::Key':
      return { standIn: 'kms-key' };
    case 'AWS::SecretsManager::Secret':
      return { standIn: 'secret' };
    default:
      return { unresolved: `${resource.Type} ${logicalId} has no local counterpart` };
  }
}

/** A template value with its tokens resolved against the assembly's other stacks and the local stack. */
function resolveValue(value: unknown, stack: AssemblyStack, assembly: Assembly, state: StackState): Resolved {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return { value: String(value) };
  if (typeof value !== 'object' || value === null) return { unresolved: JSON.stringify(value) };
  const v = value as Record<string, unknown>;
  if (typeof v['Fn::ImportValue'] === 'string') {
    const name = v['Fn::ImportValue'];
    for (const s of assembly.stacks)
      for (const output of Object.values(s.template.Outputs ?? {}))
        if (output.Export?.Name === name) return resolveValue(output.Value, s, assembly, state);
    return { unresolved: `no stack of the assembly exports ${name}` };
  }
  if (typeof v.Ref === 'string') {
    const pseudo: Record<string, string> = {
      'AWS::Region': state.region,
      'AWS::AccountId': LOCAL_ACCOUNT,
      'AWS::Partition': 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': stack.name,
    };
    return v.Ref in pseudo ? { value: pseudo[v.Ref]! } : resourceValue(stack, v.Ref, 'Ref', state);
  }
  const getAtt = v['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string')
    return resourceValue(stack, getAtt[0], String(getAtt[1]), state);
  const join = v['Fn::Join'];
  if (Array.isArray(join) && Array.isArray(join[1])) {
    const parts = (join[1] as unknown[]).map((p) => resolveValue(p, stack, assembly, state));
    const bad = parts.find((p) => !('value' in p));
    if (bad) return bad;
    return { value: parts.map((p) => (p as { value: string }).value).join(String(join[0])) };
  }
  return { unresolved: `${describe(value)} is not resolved by the harness` };
}

/**
 * The variables the template gives `fn`, resolved for the local stack, and the stand-ins for KMS and Secrets
 * Manager. A token the harness cannot resolve becomes a placeholder (`<unresolved: …>`) and is listed in
 * `problems`, so the function still loads and says where it needs it.
 */
export function templateEnvironment(
  fn: DeployedFunction,
  assembly: Assembly,
  target: LocalTarget,
): { variables: Environment; problems: string[] } {
  const local = handlerEnvironment(target.state, target.secrets);
  const variables: Environment = {};
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(fn.environment)) {
    const resolved = resolveValue(raw, fn.stack, assembly, target.state);
    if ('value' in resolved) {
      variables[name] =
        typeof raw === 'object'
          ? { value: resolved.value, origin: 'resolved', from: describe(raw) }
          : { value: resolved.value, origin: 'template' };
    } else if ('standIn' in resolved) {
      // The deployed variable (a key ARN, a secret ARN) is left out: with it set, the function would call the
      // service. The local stack's own variable takes its place, exactly as `npm start` gives it.
      const standIn = STAND_INS[resolved.standIn];
      const value = local[standIn];
      if (value === undefined) throw new Error(`local/stack-state.ts handlerEnvironment no longer sets ${standIn}`);
      variables[standIn] = { value, origin: 'local stand-in', from: `${name} = ${describe(raw)}` };
    } else {
      problems.push(`${name}: ${resolved.unresolved}`);
      variables[name] = { value: `<unresolved: ${describe(raw)}>`, origin: 'resolved', from: describe(raw) };
    }
  }
  return { variables, problems };
}

/** What the local stack gives every handler to reach its engines: the SDK's endpoint overrides and its sandbox flag. */
export function engineEnvironment(target: LocalTarget): Environment {
  const local = handlerEnvironment(target.state, target.secrets);
  const names = Object.keys(local).filter((k) => k.startsWith('AWS_ENDPOINT_URL_') || k === 'PAYROLL_LOCAL_STACK');
  return Object.fromEntries(names.map((k) => [k, { value: local[k]!, origin: 'local engines' as const }]));
}

/** The log stream name Lambda gives a fresh execution environment. */
export const logStreamName = () =>
  `${new Date().toISOString().slice(0, 10).replace(/-/g, '/')}/[$LATEST]${randomBytes(16).toString('hex')}`;

/** A CloudFormation-generated function name's shape (`<stack>-<logical id>`), at most 64 characters. */
export const functionNameOf = (fn: DeployedFunction) => `${fn.stack.name}-${fn.logicalId}`.slice(0, 64);

export const logGroupOf = (fn: DeployedFunction) => fn.logGroupName ?? `/aws/lambda/${functionNameOf(fn)}`;

/**
 * What Lambda's runtime sets in every execution environment (the reserved variables), for one function run from
 * `taskRoot`. Credentials are the local engines' (any value passes); no shared config file is read, as on Lambda.
 */
export function runtimeEnvironment(
  fn: DeployedFunction,
  target: LocalTarget,
  taskRoot: string,
  logStream: string,
): Environment {
  const local = handlerEnvironment(target.state, target.secrets);
  const runtime = (value: string): Variable => ({ value, origin: 'runtime' });
  const env: Environment = {
    AWS_REGION: runtime(target.state.region),
    AWS_DEFAULT_REGION: runtime(target.state.region),
    AWS_ACCESS_KEY_ID: runtime(local.AWS_ACCESS_KEY_ID ?? 'local'),
    AWS_SECRET_ACCESS_KEY: runtime(local.AWS_SECRET_ACCESS_KEY ?? 'local'),
    AWS_EXECUTION_ENV: runtime(`AWS_Lambda_${fn.runtime}`),
    AWS_LAMBDA_FUNCTION_NAME: runtime(functionNameOf(fn)),
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: runtime(String(fn.memoryMb)),
    AWS_LAMBDA_FUNCTION_VERSION: runtime('$LATEST'),
    AWS_LAMBDA_INITIALIZATION_TYPE: runtime('on-demand'),
    AWS_LAMBDA_LOG_GROUP_NAME: runtime(logGroupOf(fn)),
    AWS_LAMBDA_LOG_STREAM_NAME: runtime(logStream),
    LAMBDA_TASK_ROOT: runtime(taskRoot),
    _HANDLER: runtime(fn.handler),
    TZ: runtime(':UTC'),
    LANG: runtime('en_US.UTF-8'),
    // Node first, as Lambda puts its runtime's bin folder first.
    PATH: runtime([dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter)),
    // No AWS profile of this machine (its region, an endpoint) reaches the function.
    AWS_CONFIG_FILE: runtime(join(taskRoot, '.no-aws-config')),
    AWS_SHARED_CREDENTIALS_FILE: runtime(join(taskRoot, '.no-aws-credentials')),
  };
  // Lambda runs Node 22; the SDK's notice about an older Node concerns this machine only (as `npm start` does).
  if (Number(process.versions.node.split('.')[0]) < 22)
    env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = runtime('true');
  return env;
}

/** The whole environment of one run: runtime, then the template's (resolved), then the local engines'. */
export function functionEnvironment(
  fn: DeployedFunction,
  assembly: Assembly,
  target: LocalTarget,
  taskRoot: string,
  logStream: string = logStreamName(),
): { variables: Environment; problems: string[] } {
  const { variables, problems } = templateEnvironment(fn, assembly, target);
  return {
    variables: { ...runtimeEnvironment(fn, target, taskRoot, logStream), ...variables, ...engineEnvironment(target) },
    problems,
  };
}

export const plainEnvironment = (env: Environment): Record<string, string> =>
  Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.value]));

/** For printing: secrets hidden, origins shown. */
export function describeEnvironment(env: Environment): string[] {
  const width = Math.max(...Object.keys(env).map((k) => k.length));
  return Object.entries(env)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => {
      const value = SECRET_VARIABLES.has(k) ? '(hidden)' : v.value;
      return `  ${k.padEnd(width)}  ${value}   [${v.origin}${v.from ? `: ${v.from}` : ''}]`;
    });
}

/**
 * For `sam local invoke --env-vars`: per logical id, the variables the function needs against the local stack
 * (runtime variables left out: SAM's container sets its own). SAM only overrides variables the template declares,
 * so `samTemplates` writes templates that declare each of these.
 */
export function samEnvVars(assembly: Assembly, target: LocalTarget): Record<string, Record<string, string>> {
  return Object.fromEntries(
    assembly.functions.map((fn) => {
      const { variables } = templateEnvironment(fn, assembly, target);
      return [fn.logicalId, plainEnvironment({ ...variables, ...engineEnvironment(target) })];
    }),
  );
}

/**
 * Copies of the stacks' templates in which every function declares exactly the variables `samEnvVars` gives it
 * (empty values: SAM fills them from `--env-vars`), the deployed key and secret ARNs left out. Written beside the
 * originals, so the assets' relative paths (`aws:asset:path`) still resolve. Returns the files written.
 */
export function samTemplates(assembly: Assembly, target: LocalTarget, write: (file: string, text: string) => void) {
  const envVars = samEnvVars(assembly, target);
  const written: string[] = [];
  for (const stack of assembly.stacks) {
    const fns = assembly.functions.filter((f) => f.stack === stack);
    if (fns.length === 0) continue;
    const template = structuredClone(stack.template);
    for (const fn of fns) {
      const props = template.Resources![fn.logicalId]!.Properties!;
      props.Environment = {
        Variables: Object.fromEntries(
          Object.keys(envVars[fn.logicalId]!).map((k) => [
            k,
            typeof fn.environment[k] === 'string' ? fn.environment[k] : '',
          ]),
        ),
      };
    }
    const file = stack.templateFile.replace(/\.template\.json$/, '.local.template.json');
    write(file, `${JSON.stringify(template, null, 1)}\n`);
    written.push(file);
  }
  return written;
}
