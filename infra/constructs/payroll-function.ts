import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  type IGrantable,
  type IPrincipal,
  Policy,
  type PolicyStatement,
  Role,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { bundleFunction } from '../bundling/bundle-function.js';
import { REPO_ROOT } from '../bundling/options.js';
import { bundleSpecOf } from '../lambda-functions.js';
import { controlTower } from '../names.js';
import { bundledLocally } from './local-bundling.js';

export interface PayrollFunctionProps {
  /** Entry file under functions/, without extension, e.g. `api/employees`. */
  readonly handler: string;
  readonly description?: string;
  readonly environment?: Record<string, string>;
  /** @default 512 */
  readonly memorySize?: number;
  /** @default 29 seconds, API Gateway's integration limit, so a function never outlives its caller */
  readonly timeout?: Duration;
  /**
   * What happens to the function's log group when the stack is deleted. Its retention follows the environment the
   * function is told (`PAYROLL_ENVIRONMENT`): a year in production, where the logs are payroll records (the audit
   * lines among them), a month in a sandbox.
   */
  readonly removalPolicy: RemovalPolicy;
  /**
   * The log group's name; by default one CloudFormation generates. A log group kept when its stack is deleted
   * (production's) must not have a name the next create of the stack would make again, or that create fails on a
   * name that exists: a fixed name carries something unique to the stack's instance (api-stack.ts).
   */
  readonly logGroupName?: string;
  /** Concurrent executions set aside for the function, and its ceiling; by default none (the account's pool). */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * Every Lambda of the service, with its settings (runtime, architecture, bundling, logs, tracing) fixed in one
 * place, so a stack only says what differs: the entry, the environment and the grants.
 *
 * The function gets its own role with no managed policy. The role's default policy holds only what the
 * function itself needs (writing its own log group, X-Ray); everything the stack grants from the route table
 * goes through `addToAccessPolicy` into a separate policy, so the two can be reviewed (and nag-checked) apart.
 */
export class PayrollFunction extends Construct implements IGrantable {
  readonly function: LambdaFunction;
  /** Its entry file under functions/ (without extension). */
  readonly handler: string;
  readonly logGroup: LogGroup;
  readonly role: Role;
  readonly grantPrincipal: IPrincipal;
  private accessPolicy?: Policy;

  constructor(scope: Construct, id: string, props: PayrollFunctionProps) {
    super(scope, id);
    this.handler = props.handler;

    const production = props.environment?.PAYROLL_ENVIRONMENT === 'production';
    this.logGroup = new LogGroup(this, 'LogGroup', {
      logGroupName: props.logGroupName,
      retention: production ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy,
    });
    acknowledgeLogGroup(this.logGroup, production);

    // An explicit role instead of the default AWSLambdaBasicExecutionRole, whose log permissions cover every
    // log group in the account.
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.logGroup.grantWrite(this.role);
    this.grantPrincipal = this.role;

    // With its route's files, as the benchmark and the bundle tests build it.
    const bundle = bundleSpecOf(props.handler);
    this.function = new LambdaFunction(this, 'Function', {
      // Bundled at synth by esbuild, in this process, with the AWS SDK bundled in and tree-shaken
      // (infra/bundling/bundle-function.ts): the asset is self-contained, the code the benchmark and the bundle
      // tests build and load with plain `node`.
      code: Code.fromAsset(
        REPO_ROOT,
        bundledLocally(bundle, (outputDir) => {
          bundleFunction(bundle, outputDir);
        }),
      ),
      handler: 'index.handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(29),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      tracing: Tracing.ACTIVE,
      role: this.role,
      logGroup: this.logGroup,
      // The AWS SDK is in the bundle, not the runtime's: the exact client versions the lock file pins and the
      // tests exercised, tree-shaken to what the function uses, which keeps cold starts short.
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
    });

    Validations.of(this.function).acknowledge(
      {
        id: 'AwsSolutions-L1',
        reason:
          'nodejs22.x is the runtime fixed for every function and the one the bundles target (node22); moving to nodejs24.x is a deliberate, tested upgrade, not a side effect of a CDK bump.',
      },
      {
        id: controlTower('lambda_inside_vpc_check'),
        reason:
          'No function reaches anything inside a VPC: DynamoDB, S3, SQS, KMS and Secrets Manager are called on their public endpoints under IAM, and the webhook deliverer must reach customer endpoints on the internet (SSRF is refused in code). A VPC would add NAT gateways and endpoints and protect nothing the roles do not.',
      },
    );
    const defaultPolicy = this.role.node.tryFindChild('DefaultPolicy');
    if (defaultPolicy) {
      Validations.of(defaultPolicy).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only the X-Ray statement Lambda adds for active tracing (xray:PutTraceSegments, xray:PutTelemetryRecords), which supports no resource-level permissions; route grants live in the separate access policy, where a wildcard is still reported.',
      });
    }
  }

  /** Adds a grant the stack derives from the route's `access` list; returns the policy, to acknowledge findings on. */
  addToAccessPolicy(statement: PolicyStatement): Policy {
    if (!this.accessPolicy) {
      this.accessPolicy = new Policy(this, 'AccessPolicy', { roles: [this.role] });
      // No window in which the deployed function runs without its grants.
      this.function.node.addDependency(this.accessPolicy);
    }
    this.accessPolicy.addStatements(statement);
    return this.accessPolicy;
  }
}

/**
 * The Control Tower log group rules a function's log group (or the API's access log group) does not meet, with
 * why: no customer key, and in a sandbox a month's retention.
 */
export function acknowledgeLogGroup(logGroup: LogGroup, production: boolean): void {
  Validations.of(logGroup).acknowledge({
    id: controlTower('cloudwatch_log_group_encrypted_check'),
    reason:
      'CloudWatch Logs encrypts every log group at rest with its own keys. The lines are redacted before they are written (no account number, token or request body); a customer key would need a key policy for the logs service and would make the logs unreadable whenever the key is disabled.',
  });
  if (!production) {
    Validations.of(logGroup).acknowledge({
      id: controlTower('cloudwatch_log_group_retention_period_check'),
      reason:
        'A sandbox holds test data only and is deleted with its logs; its logs are kept a month. Production keeps every log group for a year.',
    });
  }
}
