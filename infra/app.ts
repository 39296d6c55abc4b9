import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import {
  App,
  Aspects,
  type IPolicyValidationContext,
  type IPolicyValidationPlugin,
  type PolicyValidationPluginReport,
  Stack,
  Tags,
  Validations,
} from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { SERVICE_NAME } from '../shared/adapters/metric-names.js';
import { TABLE_DEFINITION } from '../shared/data/table-definition.js';
import { ApiStack } from './api-stack.js';
import { OperationsDashboard } from './constructs/monitoring.js';
import { DashboardStack } from './dashboard-stack.js';
import { deploymentName } from './names.js';
import { KeyUseRoles } from './key-use-paths.js';
import { type DeploymentEnvironment, StatefulStack } from './stateful-stack.js';
import { WorkersStack } from './workers-stack.js';

export interface DeploymentContext {
  readonly environment: DeploymentEnvironment;
  readonly stage: string;
  /** `-c corsAllowOrigin=https://…`: the one origin browsers may call the API from; `*` when absent (api-stack.ts). */
  readonly corsAllowOrigin?: string;
  /** `-c alarmEmail=ops@example.com`: subscribed to the deployment's alarm topic (constructs/monitoring.ts). */
  readonly alarmEmail?: string;
}

/**
 * `-c environment=sandbox|production` (default sandbox) and `-c stage=<name>` (default dev). Stack names carry
 * both, so any number of sandboxes (one per engineer or branch) deploy side by side in one account.
 */
export function deploymentContext(app: App): DeploymentContext {
  const environment = String(app.node.tryGetContext('environment') ?? 'sandbox');
  if (environment !== 'sandbox' && environment !== 'production') {
    throw new Error(`Context "environment" must be sandbox or production, got "${environment}"`);
  }
  const stage = String(app.node.tryGetContext('stage') ?? 'dev');
  // The stage names the API Gateway stage, the KMS alias and the stacks: keep it short and URL-safe.
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) {
    throw new Error(
      `Context "stage" must be lower-case letters, digits and dashes, 1 to 20 long, starting with a letter; got "${stage}"`,
    );
  }
  const cors = app.node.tryGetContext('corsAllowOrigin') as unknown;
  if (cors !== undefined && !(typeof cors === 'string' && /^(\*|https:\/\/[a-z0-9.-]+(:\d+)?)$/.test(cors))) {
    throw new Error(
      `Context "corsAllowOrigin" must be * or an https origin such as https://dashboard.example.com; got "${String(cors)}"`,
    );
  }
  const email = app.node.tryGetContext('alarmEmail') as unknown;
  if (email !== undefined && !(typeof email === 'string' && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email))) {
    throw new Error(`Context "alarmEmail" must be an e-mail address such as ops@example.com; got "${String(email)}"`);
  }
  return {
    environment,
    stage,
    ...(typeof cors === 'string' && { corsAllowOrigin: cors }),
    ...(typeof email === 'string' && { alarmEmail: email }),
  };
}

export interface PayrollStacks {
  readonly stateful: StatefulStack;
  readonly api: ApiStack;
  readonly workers: WorkersStack;
  readonly dashboard: DashboardStack;
  /** The deployment's CloudWatch dashboard, alone in its stack (constructs/monitoring.ts says why). */
  readonly monitoring: Stack;
}

/**
 * Adds the service's stacks and the cdk-nag AwsSolutions checks to an app. The tests build their app through
 * this too, so what they assert is what `cdk synth` deploys.
 *
 * Stacks are environment-agnostic (no account, no region, no lookups): synth works offline without credentials
 * and the same templates deploy to whichever account and region the CLI's credentials point at.
 */
export function addPayrollStacks(app: App): PayrollStacks {
  const { environment, stage, corsAllowOrigin, alarmEmail } = deploymentContext(app);
  const prefix = deploymentName(environment, stage);

  const stateful = new StatefulStack(app, `${prefix}-Stateful`, {
    stackName: `${prefix}-Stateful`,
    description: `Payroll API ${environment}/${stage}: key, table, bucket, queues, secrets`,
    environment,
    stage,
    alarmEmail,
    terminationProtection: environment === 'production',
  });
  const resources = { ...stateful.serviceResources(), alarmTopic: stateful.alarmTopic };
  const api = new ApiStack(app, `${prefix}-Api`, {
    stackName: `${prefix}-Api`,
    description: `Payroll API ${environment}/${stage}: REST API and functions`,
    environment,
    stage,
    corsAllowOrigin,
    ...resources,
  });
  // Independent of the API stack: both only import from the stateful one.
  const workers = new WorkersStack(app, `${prefix}-Workers`, {
    stackName: `${prefix}-Workers`,
    description: `Payroll API ${environment}/${stage}: payroll processor, stuck-run sweeper and webhook deliverer`,
    environment,
    stage,
    ...resources,
  });

  // The developer dashboard: a static site that calls the API from its own origin (config.json names the API).
  const dashboard = new DashboardStack(app, `${prefix}-Dashboard`, {
    stackName: `${prefix}-Dashboard`,
    description: `Payroll API ${environment}/${stage}: developer dashboard (S3 and CloudFront)`,
    environment,
    stage,
    api: { apiUrl: api.apiUrl, restApiId: api.api.restApiId },
  });

  const monitoring = new Stack(app, `${prefix}-Monitoring`, {
    stackName: `${prefix}-Monitoring`,
    description: `Payroll API ${environment}/${stage}: CloudWatch dashboard`,
  });
  const { payroll, webhooks } = stateful.queues;
  new OperationsDashboard(monitoring, 'Operations', {
    deployment: prefix,
    api: { name: api.api.restApiName, stage },
    functions: [...Object.values(api.functions), api.auditLog.function, ...Object.values(workers.functions)],
    queues: { [payroll.node.id]: payroll.queue, [webhooks.node.id]: webhooks.queue },
    parked: {
      [`${payroll.node.id} DLQ`]: payroll.deadLetterQueue,
      [`${webhooks.node.id} DLQ`]: webhooks.deadLetterQueue,
      'Audit log failures': api.auditLog.failures,
    },
    table: stateful.table,
    indexes: TABLE_DEFINITION.globalSecondaryIndexes.map((i) => i.indexName),
  });

  // The roles granted a key use the key policies confine (bank account data keys, the bucket through S3, NACHA file
  // data keys) go under the IAM path those policies admit (key-use-paths.ts, stateful-stack.ts).
  Aspects.of(app).add(new KeyUseRoles(environment, stage));

  Tags.of(app).add('service', SERVICE_NAME);
  Tags.of(app).add('environment', environment);
  Tags.of(app).add('stage', stage);

  // cdk-nag 3 is a policy-validation plugin (the v2 `Aspects.of(app).add(...)` form crashes with it): it runs
  // when the app synthesizes and fails synthesis on any unacknowledged error. Acknowledgments
  // (`Validations.of(construct).acknowledge`) sit next to the resource they concern, each with its reason, and
  // are also written into the templates' metadata for auditors.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
  // AWS Control Tower's proactive controls, by cfn-guard, on the same terms: acknowledged next to the resource, with
  // `controlTower('<rule>')` (names.ts) as the id.
  Validations.of(app).addPlugins(new ControlTowerChecks());

  return { stateful, api, workers, dashboard, monitoring };
}

/**
 * The Control Tower rules cfn-guard runs (shipped with the validator), with the resource types each reports on (its
 * "Reports on" header; failing that, every type it mentions).
 */
const CONTROL_TOWER_RULES = (() => {
  const dir = join(
    dirname(createRequire(import.meta.url).resolve('@cdklabs/cdk-validator-cfnguard/package.json')),
    'rules/control-tower/cfn-guard',
  );
  const typesIn = (text: string) => [...text.matchAll(/AWS::\w+::\w+/g)].map((m) => m[0]);
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.guard'))
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      const reportsOn = typesIn(/Reports on:([\s\S]*?)Evaluates:/.exec(text)?.[1] ?? '');
      return { name: basename(file, '.guard'), types: reportsOn.length > 0 ? reportsOn : typesIn(text) };
    });
})();

type GuardFindings = PolicyValidationPluginReport['violations'];

/**
 * Findings by what was checked (the rules, the template), kept on disk under the repository's
 * `node_modules/.cache`: the tests synthesize the same stacks in several processes, and a synth whose templates did
 * not change need not run cfn-guard again. The key covers the validator's version (its binary and rules) and the
 * rules left on, so a cached answer is exactly the one cfn-guard would give. Not in the system's temporary folder:
 * anyone on a shared machine may write there, and a planted `[]` answer would switch the check off.
 */
export const GUARD_CACHE = fileURLToPath(new URL('../node_modules/.cache/payroll-cfn-guard', import.meta.url));
const GUARD_VERSION = readFileSync(
  createRequire(import.meta.url).resolve('@cdklabs/cdk-validator-cfnguard/package.json'),
  'utf8',
);

function cachedFindings(checked: string, check: () => GuardFindings): GuardFindings {
  const file = join(GUARD_CACHE, `${createHash('sha256').update(GUARD_VERSION).update(checked).digest('hex')}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as GuardFindings;
  } catch {
    const found = check();
    mkdirSync(GUARD_CACHE, { recursive: true });
    // Written whole, then renamed: a concurrent synth reads either nothing or the complete answer.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify(found));
    renameSync(partial, file);
    return found;
  }
}

/**
 * cfn-guard with the Control Tower rules, reporting under the validator's own name (so `cdk-validator-cfnguard::…`
 * acknowledges its findings). cfn-guard's time grows with rules × template size (over 20 s a synth for all of them
 * at once), so each template is checked on its own, without its metadata (cdk-nag's and CDK's, which no rule
 * reads), by the rules that report on a resource type it holds: any other rule would skip every resource in it.
 */
export class ControlTowerChecks implements IPolicyValidationPlugin {
  readonly name = 'cdk-validator-cfnguard';

  validate(context: IPolicyValidationContext): PolicyValidationPluginReport {
    const dir = mkdtempSync(join(tmpdir(), 'cfn-guard-'));
    try {
      const violations = context.templatePaths.flatMap((path) => {
        const template = JSON.parse(readFileSync(path, 'utf8')) as {
          Resources?: Record<string, { Type: string; Metadata?: unknown }>;
        };
        const resources = Object.values(template.Resources ?? {});
        for (const resource of resources) delete resource.Metadata;
        const types = new Set(resources.map((r) => r.Type));
        const disabledRules = CONTROL_TOWER_RULES.filter(
          (rule) => rule.types.length > 0 && !rule.types.some((type) => types.has(type)),
        ).map((rule) => rule.name);
        if (disabledRules.length === CONTROL_TOWER_RULES.length) return [];
        const checked = `${basename(path)}\n${disabledRules.join(',')}\n${JSON.stringify(template)}`;
        const found = cachedFindings(checked, () => {
          const copy = join(dir, basename(path));
          writeFileSync(copy, JSON.stringify(template));
          return new CfnGuardValidator({ disabledRules }).validate({ ...context, templatePaths: [copy] }).violations;
        });
        // Severity set, so that CDK still fails the synth on what no acknowledgment covers (once it has applied the
        // acknowledgments, it counts a violation without one as a warning); and only locations in a resource: the
        // validator also reports the literal a failed comparison expected, which points at no resource.
        return found.map((violation) => {
          const located = violation.violatingResources.filter((r) => r.resourceLogicalId !== undefined);
          return {
            ...violation,
            severity: 'error',
            violatingResources: (located.length > 0 ? located : violation.violatingResources).map((r) => ({
              ...r,
              templatePath: path,
            })),
          };
        });
      });
      return { success: violations.length === 0, violations };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const app = new App();
  addPayrollStacks(app);
  app.synth();
}
