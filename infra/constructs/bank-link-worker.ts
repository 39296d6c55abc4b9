import { METRIC_NAMES } from '../../shared/adapters/metric-names.js';
import { Aws, Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IScheduleTarget, Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { TABLE_ACCESS } from '../../shared/api/table-access.js';
import { BANK_LINK_OBJECT_PREFIX, CONNECTOR_DEPLOYMENT_TAG } from '../../shared/adapters/transfer-connector.js';
import { WORKER_HANDLERS } from '../lambda-functions.js';
import { type BankConnector, importedBucketArn } from './bank-connector.js';
import { businessMetric, RUNBOOK } from './monitoring.js';
import { PayrollFunction } from './payroll-function.js';
import { grantAccess, grantTable, type ServiceResources } from './service-access.js';

export interface BankLinkWorkerProps {
  resources: ServiceResources;
  environment: Record<string, string>;
  removalPolicy: RemovalPolicy;
  /** The Transfer Family roles (and the stage's connector) the worker reaches banks through. */
  connector: BankConnector;
  /** The deployment's name: the namespace of its business metrics, the tag of its connectors. */
  deployment: string;
}

/** How often the bank link delivers ready files and picks up what the bank left. */
export const BANK_LINK_EVERY = Duration.minutes(1);

/**
 * The business metrics the bank link's alarms watch, counted by the pass (shared/use-cases/bank-link/serve-bank-link.ts):
 * a file raised late (`disbursement_file.late`), and a pass that ended `failing` for an organization.
 */
export const BANK_LINK_METRICS = {
  filesLate: METRIC_NAMES.disbursementFilesLate,
  passesFailed: METRIC_NAMES.bankLinkPassesFailed,
} as const;

/** Failing passes in this many of the last 15 minutes page: one failed pass is retried a minute later anyway. */
export const FAILING_PASS_MINUTES = 10;

/**
 * The bank link: every minute (EventBridge Scheduler), for each organization with a link, ready files go to the bank
 * through the organization's Transfer Family connector (its host key pinned) and the bank's acknowledgements and
 * return files are picked up and applied.
 */
export class BankLinkWorker extends Construct {
  readonly worker: PayrollFunction;
  readonly schedule: Schedule;
  /** A file late at the bank; passes failing for 10 minutes. Sent to the deployment's topic by the stack. */
  readonly alarms: Alarm[];

  constructor(scope: Construct, id: string, props: BankLinkWorkerProps) {
    super(scope, id);
    const { resources, connector } = props;
    this.worker = new PayrollFunction(this, 'BankLink', {
      handler: WORKER_HANDLERS.bankLink,
      description:
        "Bank link: delivers ready NACHA files through Transfer Family SFTP connectors and picks up the bank's acknowledgements and returns",
      environment: {
        ...props.environment,
        PAYROLL_BANK_TRANSPORT: 'connector',
        PAYROLL_BANK_CONNECTOR_ACCESS_ROLE_ARN: connector.accessRole.roleArn,
        PAYROLL_BANK_CONNECTOR_LOGGING_ROLE_ARN: connector.loggingRole.roleArn,
        PAYROLL_BANK_CONNECTOR_SECRET_PREFIX: connector.secretPrefix,
        PAYROLL_BANK_CONNECTOR_DEPLOYMENT: props.deployment,
      },
      memorySize: 512,
      timeout: Duration.seconds(300),
      // One pass at a time: two would list the same folders and race to send the same file.
      reservedConcurrentExecutions: 1,
      removalPolicy: props.removalPolicy,
    });
    grantTable(this.worker, resources, TABLE_ACCESS['bank-link']!);
    // The link's password or key (wrapped like account numbers), a corrected account number a change notice
    // carries (encrypted again under a new data key), the sealed files it sends, and the events returns raise.
    for (const access of [
      'kms:decrypt:bank-account',
      'kms:encrypt:bank-account',
      'kms:decrypt:disbursement-file',
      'bucket:read',
      'queue:webhooks:send',
    ] as const) {
      grantAccess(this.worker, access, resources);
    }
    this.grantConnectors(props);

    // A failed pass is not retried: the next one, a minute later, does the same work.
    // A pass that outlasts the minute throttles the next invocation (one at a time): that one is dropped, not queued.
    this.worker.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(2) });
    this.schedule = new Schedule(this, 'BankLinkSchedule', {
      description: 'Every minute: deliver ready files to the bank and pick up what it sent back',
      schedule: ScheduleExpression.rate(BANK_LINK_EVERY),
      target: this.invokeTarget(),
    });

    this.alarms = this.lateFileAlarms(props.deployment);
  }

  /**
   * The schedule's target: the function, invoked by a role of its own that may invoke exactly it (the stock target
   * also grants its versions and aliases, `<function>:*`, which it has none of). Not retried, and dropped after two
   * minutes: the next pass does the same work.
   */
  private invokeTarget(): IScheduleTarget {
    const fn = this.worker.function;
    const role = new Role(this, 'ScheduleRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
      }),
      description: 'EventBridge Scheduler: invokes the bank link worker every minute',
    });
    role.addToPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }));
    return {
      bind: () => ({
        arn: fn.functionArn,
        role,
        retryPolicy: { maximumRetryAttempts: 0, maximumEventAgeInSeconds: Duration.minutes(2).toSeconds() },
      }),
    };
  }

  /**
   * What the worker needs of Transfer Family beyond the bucket and table grants: connectors of its deployment only
   * (created with its tag, used only when they carry it), the two roles passed to them and nothing else, the secrets
   * under its prefix, and the bank-link objects of the bucket.
   */
  private grantConnectors({ connector, deployment, resources }: BankLinkWorkerProps): void {
    const fn = this.worker;
    const connectors = `arn:${Aws.PARTITION}:transfer:${Aws.REGION}:${Aws.ACCOUNT_ID}:connector/*`;
    const tag = CONNECTOR_DEPLOYMENT_TAG;
    const bucket = importedBucketArn(this, resources.disbursementBucket);
    const objects = `${BANK_LINK_OBJECT_PREFIX}/*`;
    const statements = [
      // CreateConnector has no resource of its own to name; the request's tag holds it to this deployment.
      new PolicyStatement({
        sid: 'ConnectorCreate',
        actions: ['transfer:CreateConnector'],
        resources: ['*'],
        conditions: { StringEquals: { [`aws:RequestTag/${tag}`]: deployment } },
      }),
      // Tagging on create is authorized on the new connector; only with the deployment's tag.
      new PolicyStatement({
        sid: 'ConnectorTag',
        actions: ['transfer:TagResource'],
        resources: [connectors],
        conditions: { StringEquals: { [`aws:RequestTag/${tag}`]: deployment } },
      }),
      new PolicyStatement({
        sid: 'ConnectorUse',
        actions: [
          'transfer:DescribeConnector',
          'transfer:UpdateConnector',
          'transfer:TestConnection',
          'transfer:StartDirectoryListing',
          'transfer:StartFileTransfer',
          'transfer:ListFileTransferResults',
        ],
        resources: [connectors],
        conditions: { StringEquals: { [`aws:ResourceTag/${tag}`]: deployment } },
      }),
      new PolicyStatement({
        sid: 'ConnectorRoles',
        actions: ['iam:PassRole'],
        resources: [connector.accessRole.roleArn, connector.loggingRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'transfer.amazonaws.com' } },
      }),
      new PolicyStatement({
        sid: 'ConnectorSecrets',
        actions: ['secretsmanager:CreateSecret', 'secretsmanager:PutSecretValue'],
        resources: [
          `arn:${Aws.PARTITION}:secretsmanager:${Aws.REGION}:${Aws.ACCOUNT_ID}:secret:${connector.secretPrefix}/*`,
        ],
      }),
      // Files staged for sending, the listings and what it retrieves; never a delete (service-access.ts).
      new PolicyStatement({
        sid: 'BankLinkObjects',
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [`${bucket.arn}/${objects}`],
      }),
      // Writing under SSE-KMS makes a data key; reading is 'bucket:read''s BucketKeyRead.
      new PolicyStatement({
        sid: 'BankLinkObjectsKey',
        actions: ['kms:GenerateDataKey'],
        resources: [resources.key.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `s3.${Aws.REGION}.amazonaws.com` } },
      }),
    ];
    let policy: ReturnType<PayrollFunction['addToAccessPolicy']> | undefined;
    for (const statement of statements) policy = fn.addToAccessPolicy(statement);
    Validations.of(policy!).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'transfer:CreateConnector names no resource (IAM requires *); the statement holds it to requests that tag the new connector with this deployment.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:transfer:<AWS::Region>:<AWS::AccountId>:connector/*]',
        reason:
          'The worker makes one connector per organization at run time, so no id is known at deploy time: the statements hold it to connectors tagged with this deployment.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${connector.secretPrefix}/*]`,
        reason:
          'Each organization’s connector secret is <prefix>/<organization id>, made when the organization is first served; Secrets Manager adds a random suffix to every ARN.',
      },
      {
        id: bucket.finding(objects),
        reason: `Object actions can only name objects by key pattern; this one covers the ${BANK_LINK_OBJECT_PREFIX}/ prefix alone, where the bank link stages its files, listings and retrievals.`,
      },
    );
  }

  private lateFileAlarms(deployment: string): Alarm[] {
    const alarm = (
      id: string,
      metric: string,
      period: Duration,
      periods: number,
      datapoints: number,
      description: string,
    ) =>
      new Alarm(this, id, {
        metric: businessMetric(deployment, metric).with({ period }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: periods,
        datapointsToAlarm: datapoints,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: `${description} ${RUNBOOK}, ${id}.`,
      });
    return [
      alarm(
        'DisbursementFilesLate',
        BANK_LINK_METRICS.filesLate,
        Duration.minutes(5),
        1,
        1,
        'A disbursement file was not at the bank by its cut-off, or not acknowledged an hour after it (disbursement_file.late).',
      ),
      alarm(
        'BankLinkPassesFailing',
        BANK_LINK_METRICS.passesFailed,
        Duration.minutes(1),
        15,
        FAILING_PASS_MINUTES,
        `The bank link failed for an organization in ${FAILING_PASS_MINUTES} of the last 15 minutes.`,
      ),
    ];
  }
}
