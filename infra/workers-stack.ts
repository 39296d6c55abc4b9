import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { QUEUE_DEFINITIONS } from '../shared/data/table-definition.js';
import { baseEnvironment } from './api-stack.js';
import { BankConnector, stageBank } from './constructs/bank-connector.js';
import { BankLinkWorker } from './constructs/bank-link-worker.js';
import { Alarms } from './constructs/monitoring.js';
import { PayrollProcessor } from './constructs/payroll-processor.js';
import type { PayrollFunction } from './constructs/payroll-function.js';
import type { ServiceResources } from './constructs/service-access.js';
import { WebhookDeliverer } from './constructs/webhook-deliverer.js';
import { deploymentName } from './names.js';
import { queueVisibilityTimeout } from './queue-consumers.js';
import type { DeploymentEnvironment } from './stateful-stack.js';

export interface WorkersStackProps extends StackProps, ServiceResources {
  readonly environment: DeploymentEnvironment;
  readonly stage: string;
  /** The deployment's alarm topic (stateful stack): every alarm of this stack notifies it. */
  readonly alarmTopic: ITopic;
}

/**
 * The functions that run off queues and schedules rather than requests: the payroll processor, its stuck-run
 * sweeper, the webhook deliverer and the bank link (with Transfer Family's side of it). Stateless like the API stack and beside it, not inside it: the two only meet
 * at the queues, so either deploys, rolls back or is torn down without touching the other.
 */
export class WorkersStack extends Stack {
  readonly payroll: PayrollProcessor;
  readonly webhooks: WebhookDeliverer;
  readonly bankLink: BankLinkWorker;
  /** Transfer Family's roles for the bank link, and the stage's connector when the stage names a bank. */
  readonly bankConnector: BankConnector;
  /** By name, for tests and outputs. */
  readonly functions: Record<'processor' | 'sweeper' | 'deliverer' | 'bankLink', PayrollFunction>;

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, props);
    const production = props.environment === 'production';
    // Logs kept when the stack goes, but not by a create that rolls back (api-stack.ts says why).
    const removalPolicy = production ? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE : RemovalPolicy.DESTROY;
    const environment = baseEnvironment(props.environment, props.stage);

    this.payroll = new PayrollProcessor(this, 'Payroll', {
      resources: props,
      queueVisibilityTimeout: queueVisibilityTimeout('payroll'),
      environment,
      removalPolicy,
    });
    this.webhooks = new WebhookDeliverer(this, 'Webhooks', {
      resources: props,
      queueVisibilityTimeout: queueVisibilityTimeout('webhooks'),
      maxReceiveCount: QUEUE_DEFINITIONS.webhooks.maxReceiveCount,
      environment,
      removalPolicy,
    });
    const deployment = deploymentName(props.environment, props.stage);
    this.bankConnector = new BankConnector(this, 'BankConnector', {
      environment: props.environment,
      stage: props.stage,
      bucket: props.disbursementBucket,
      key: props.key,
      removalPolicy,
      bank: stageBank(this),
    });
    this.bankLink = new BankLinkWorker(this, 'BankLink', {
      resources: props,
      environment,
      removalPolicy,
      connector: this.bankConnector,
      deployment,
    });
    this.functions = {
      processor: this.payroll.processor,
      sweeper: this.payroll.sweeper,
      deliverer: this.webhooks.deliverer,
      bankLink: this.bankLink.worker,
    };

    const alarms = new Alarms(this, 'Alarms', props.alarmTopic);
    alarms.functions(Object.values(this.functions));
    // Any run that ends failed, whichever function publishes it (shared/adapters/metric-names.ts).
    alarms.payrollsFailed(deployment);
    // Files late at the bank, and bank link passes failing for a while (constructs/bank-link-worker.ts).
    alarms.notify(...this.bankLink.alarms);

    new CfnOutput(this, 'ProcessorFunctionName', { value: this.payroll.processor.function.functionName });
    new CfnOutput(this, 'ProcessorLogGroupName', { value: this.payroll.processor.logGroup.logGroupName });
    new CfnOutput(this, 'SweeperLogGroupName', { value: this.payroll.sweeper.logGroup.logGroupName });
    new CfnOutput(this, 'DelivererFunctionName', { value: this.webhooks.deliverer.function.functionName });
    new CfnOutput(this, 'DelivererLogGroupName', { value: this.webhooks.deliverer.logGroup.logGroupName });
    new CfnOutput(this, 'BankLinkLogGroupName', { value: this.bankLink.worker.logGroup.logGroupName });
  }
}
