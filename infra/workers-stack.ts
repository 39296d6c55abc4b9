import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { QUEUE_DEFINITIONS } from '../shared/data/table-definition.js';
import { baseEnvironment } from './api-stack.js';
import { PayrollProcessor } from './constructs/payroll-processor.js';
import type { PayrollFunction } from './constructs/payroll-function.js';
import type { ServiceResources } from './constructs/service-access.js';
import type { DeploymentEnvironment } from './stateful-stack.js';

export interface WorkersStackProps extends StackProps, ServiceResources {
  readonly environment: DeploymentEnvironment;
  readonly stage: string;
}

/**
 * The functions that run off queues and schedules rather than requests: the payroll processor and its stuck-run
 * sweeper (the webhook deliverer joins them). Stateless like the API stack and beside it, not inside it: the two
 * only meet at the queue, so either deploys, rolls back or is torn down without touching the other.
 */
export class WorkersStack extends Stack {
  readonly payroll: PayrollProcessor;
  /** By name, for tests and outputs. */
  readonly functions: Record<'processor' | 'sweeper', PayrollFunction>;

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, props);
    const production = props.environment === 'production';

    this.payroll = new PayrollProcessor(this, 'Payroll', {
      resources: props,
      queueVisibilityTimeout: Duration.seconds(QUEUE_DEFINITIONS.payroll.visibilityTimeoutSeconds),
      environment: baseEnvironment(props.environment),
      logRemovalPolicy: production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.functions = { processor: this.payroll.processor, sweeper: this.payroll.sweeper };

    new CfnOutput(this, 'ProcessorFunctionName', { value: this.payroll.processor.function.functionName });
    new CfnOutput(this, 'ProcessorLogGroupName', { value: this.payroll.processor.logGroup.logGroupName });
    new CfnOutput(this, 'SweeperLogGroupName', { value: this.payroll.sweeper.logGroup.logGroupName });
  }
}
