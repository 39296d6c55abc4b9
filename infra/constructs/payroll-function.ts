import { basename, join } from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { type IGrantable, type IPrincipal, Policy, type PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { routeModuleFile } from '../../shared/http/route-files.js';
import { ESM_REQUIRE_SHIM, LAMBDA_TARGET, lambdaAliasArgs, lambdaModuleCommand, MAIN_FIELDS, REPO_ROOT } from '../bundling/options.js';

export interface PayrollFunctionProps {
  /** Entry file under functions/, without extension (a route's `handler`), e.g. `api/create-employee`. */
  readonly handler: string;
  readonly description?: string;
  readonly environment?: Record<string, string>;
  /** @default 512 */
  readonly memorySize?: number;
  /** @default 29 seconds, API Gateway's integration limit, so a function never outlives its caller */
  readonly timeout?: Duration;
  /** What happens to the function's log group when the stack is deleted. */
  readonly logRemovalPolicy: RemovalPolicy;
  /** Files (paths from the repository root) copied beside the bundle, for the handler to read at run time. */
  readonly files?: readonly string[];
  /** Modules (source paths from the repository root) bundled into their own files beside the bundle, imported on first use. */
  readonly modules?: readonly string[];
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
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  readonly role: Role;
  readonly grantPrincipal: IPrincipal;
  private accessPolicy?: Policy;

  constructor(scope: Construct, id: string, props: PayrollFunctionProps) {
    super(scope, id);

    this.logGroup = new LogGroup(this, 'LogGroup', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy,
    });

    // An explicit role instead of the default AWSLambdaBasicExecutionRole, whose log permissions cover every
    // log group in the account.
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.logGroup.grantWrite(this.role);
    this.grantPrincipal = this.role;

    this.function = new NodejsFunction(this, 'Function', {
      entry: join(REPO_ROOT, 'functions', `${props.handler}.ts`),
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(29),
      tracing: Tracing.ACTIVE,
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        // Bundle locally with the esbuild devDependency; Docker is neither needed nor available.
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: LAMBDA_TARGET,
        mainFields: MAIN_FIELDS,
        banner: ESM_REQUIRE_SHIM,
        minify: true,
        sourceMap: true,
        // The maps only need line mappings for --enable-source-maps; embedding the sources would double the upload.
        sourcesContent: false,
        // The AWS SDK v3 is bundled, not taken from the runtime: the deployed code then runs the exact client
        // versions the lock file pins and the tests exercised (the runtime's copy lags and changes under us), and
        // esbuild keeps only the commands the function uses, which keeps cold starts short.
        externalModules: [],
        bundleAwsSDK: true,
        // Environment credentials in place of the SDK's whole default chain (infra/bundling/env-credentials.ts).
        esbuildArgs: lambdaAliasArgs(),
        ...((props.files?.length || props.modules?.length) && {
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            afterBundling: (inputDir: string, outputDir: string) => [
              ...(props.files ?? []).map((file) => `cp "${join(inputDir, file)}" "${join(outputDir, basename(file))}"`),
              ...(props.modules ?? []).map((module) => lambdaModuleCommand(module, join(outputDir, routeModuleFile(module)))),
            ],
          },
        }),
      },
    });

    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason: 'nodejs22.x is the runtime fixed for every function and the one the bundles target (node22); moving to nodejs24.x is a deliberate, tested upgrade, not a side effect of a CDK bump.',
    });
    const defaultPolicy = this.role.node.tryFindChild('DefaultPolicy');
    if (defaultPolicy) {
      Validations.of(defaultPolicy).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Only the X-Ray statement Lambda adds for active tracing (xray:PutTraceSegments, xray:PutTelemetryRecords), which supports no resource-level permissions; route grants live in the separate access policy, where a wildcard is still reported.',
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
