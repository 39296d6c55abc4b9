import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { TABLE_ACCESS } from '../../shared/api/table-access.js';
import { WORKER_HANDLERS } from '../lambda-functions.js';
import { PayrollFunction } from './payroll-function.js';
import { grantAccess, grantTable, type ServiceResources } from './service-access.js';

export interface BankLinkWorkerProps {
  resources: ServiceResources;
  environment: Record<string, string>;
  removalPolicy: RemovalPolicy;
}

/** How often the bank link delivers ready files and picks up what the bank left. */
export const BANK_LINK_EVERY = Duration.minutes(1);

/**
 * The bank link: every minute, for each organization with a link, ready files go to the bank's SFTP server (its host
 * key pinned) and the bank's acknowledgements and return files are picked up and applied.
 */
export class BankLinkWorker extends Construct {
  readonly worker: PayrollFunction;
  readonly schedule: Rule;

  constructor(scope: Construct, id: string, props: BankLinkWorkerProps) {
    super(scope, id);
    const { resources } = props;
    this.worker = new PayrollFunction(this, 'BankLink', {
      handler: WORKER_HANDLERS.bankLink,
      description: "Bank link: delivers ready NACHA files by SFTP and picks up the bank's acknowledgements and returns",
      environment: props.environment,
      memorySize: 512,
      timeout: Duration.seconds(300),
      // One pass at a time: two would list the same folders and race to send the same file.
      reservedConcurrentExecutions: 1,
      removalPolicy: props.removalPolicy,
    });
    grantTable(this.worker, resources, TABLE_ACCESS['bank-link']!);
    // The link's password or key (wrapped like account numbers), a corrected account number a change notice
    // carries, the sealed files it sends, and the events returns raise.
    for (const access of [
      'kms:decrypt:bank-account',
      'kms:decrypt:disbursement-file',
      'bucket:read',
      'queue:webhooks:send',
    ] as const) {
      grantAccess(this.worker, access, resources);
    }
    // A failed pass is not retried: the next one, a minute later, does the same work.
    this.worker.function.configureAsyncInvoke({ retryAttempts: 0 });
    this.schedule = new Rule(this, 'BankLinkSchedule', {
      description: 'Every minute: deliver ready files to the bank and pick up what it sent back',
      schedule: Schedule.rate(BANK_LINK_EVERY),
      targets: [new LambdaFunction(this.worker.function, { retryAttempts: 0, maxEventAge: Duration.minutes(2) })],
    });
  }
}
