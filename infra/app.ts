import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Aspects, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ApiStack, SERVICE_NAME } from './api-stack.js';
import { DashboardStack } from './dashboard-stack.js';
import { BankAccountKeyRoles, type DeploymentEnvironment, StatefulStack } from './stateful-stack.js';
import { WorkersStack } from './workers-stack.js';

export interface DeploymentContext {
  readonly environment: DeploymentEnvironment;
  readonly stage: string;
  /** `-c corsAllowOrigin=https://…`: the one origin browsers may call the API from; `*` when absent (api-stack.ts). */
  readonly corsAllowOrigin?: string;
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
  return { environment, stage, ...(typeof cors === 'string' && { corsAllowOrigin: cors }) };
}

export interface PayrollStacks {
  readonly stateful: StatefulStack;
  readonly api: ApiStack;
  readonly workers: WorkersStack;
  readonly dashboard: DashboardStack;
}

/**
 * Adds the service's stacks and the cdk-nag AwsSolutions checks to an app. The tests build their app through
 * this too, so what they assert is what `cdk synth` deploys.
 *
 * Stacks are environment-agnostic (no account, no region, no lookups): synth works offline without credentials
 * and the same templates deploy to whichever account and region the CLI's credentials point at.
 */
export function addPayrollStacks(app: App): PayrollStacks {
  const { environment, stage, corsAllowOrigin } = deploymentContext(app);
  const prefix = `Payroll-${environment}-${stage}`;

  const stateful = new StatefulStack(app, `${prefix}-Stateful`, {
    stackName: `${prefix}-Stateful`,
    description: `Payroll API ${environment}/${stage}: key, table, bucket, queues, secrets`,
    environment,
    stage,
    terminationProtection: environment === 'production',
  });
  const resources = {
    table: stateful.table,
    key: stateful.key,
    disbursementBucket: stateful.disbursementBucket,
    signingSecret: stateful.signingSecret,
    queues: { payroll: stateful.queues.payroll.queue, webhooks: stateful.queues.webhooks.queue },
  };
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

  // The roles granted bank account key use go under the IAM path the key policy admits (stateful-stack.ts).
  Aspects.of(app).add(new BankAccountKeyRoles(environment, stage));

  Tags.of(app).add('service', SERVICE_NAME);
  Tags.of(app).add('environment', environment);
  Tags.of(app).add('stage', stage);

  // cdk-nag 3 is a policy-validation plugin (the v2 `Aspects.of(app).add(...)` form crashes with it): it runs
  // when the app synthesizes and fails synthesis on any unacknowledged error. Acknowledgments
  // (`Validations.of(construct).acknowledge`) sit next to the resource they concern, each with its reason, and
  // are also written into the templates' metadata for auditors.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));

  return { stateful, api, workers, dashboard };
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const app = new App();
  addPayrollStacks(app);
  app.synth();
}
