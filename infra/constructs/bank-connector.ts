import { Aws, CfnOutput, Fn, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Effect, PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { CfnConnector } from 'aws-cdk-lib/aws-transfer';
import { Construct } from 'constructs';
import * as z from 'zod';
import { BANK_LINK_OBJECT_PREFIX, readHostKey } from '../../shared/adapters/transfer-connector.js';
import { REMOTE_HOST } from '../../shared/domain/bank-link.js';
import { keyUseRolePath } from '../key-use-paths.js';
import type { DeploymentEnvironment } from '../stateful-stack.js';
import { acknowledgeLogGroup } from './payroll-function.js';

/**
 * Transfer Family's side of the bank link: the role its SFTP connectors read the credential and the bucket with, the
 * role they log with, and, when the stage names a bank (`-c bank=…`), a connector to it whose static egress addresses
 * (shared by every connector of the account, so the allow-list of every bank) are a stack output. The worker makes one
 * connector per organization at run time (shared/adapters/transfer-connector.ts) with these two roles.
 */

/** The stage's bank, from the `bank` context: a connector CloudFormation makes, trusting these keys. */
export interface StageBank {
  /** `sftp://host` or `sftp://host:port`. */
  readonly url: string;
  readonly username: string;
  /** `<type> <base64>` lines (`ssh-keyscan` without the host): RSA or ECDSA, the kinds a connector trusts. */
  readonly trustedHostKeys: readonly string[];
}

/** The key types Transfer Family accepts as a connector's trusted host key. */
const TRUSTED_KEY_TYPES = ['ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521'];

const stageBankSchema = z.strictObject({
  url: z.string().refine((url) => {
    const m = /^sftp:\/\/([^:/]+)(?::(\d{1,5}))?$/.exec(url);
    return !!m && REMOTE_HOST.test(m[1]!) && (m[2] === undefined || (Number(m[2]) >= 1 && Number(m[2]) <= 65_535));
  }, 'sftp://<host>[:<port>]'),
  username: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, ., _ and -, at most 64'),
  trustedHostKeys: z
    .array(
      z.string().refine(
        (line) => {
          const [type, body, ...rest] = line.split(' ');
          if (rest.length > 0 || !TRUSTED_KEY_TYPES.includes(type!) || body === undefined) return false;
          try {
            return readHostKey(line).line === line;
          } catch {
            return false;
          }
        },
        `"<type> <base64>" with no host or comment, the type one of ${TRUSTED_KEY_TYPES.join(', ')}`,
      ),
    )
    .min(1)
    .max(10),
});

/**
 * `-c bank='{"url":"sftp://sftp.bank.example","username":"acme","trustedHostKeys":["ecdsa-sha2-nistp256 AAAA…"]}'`
 * (or the same object under `context.bank` in cdk.json): the stage's bank. Absent: no stage connector.
 */
export function stageBank(scope: Construct): StageBank | undefined {
  const raw = scope.node.tryGetContext('bank') as unknown;
  if (raw === undefined) return undefined;
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new Error(`Context "bank" must be a JSON object; got ${JSON.stringify(raw.slice(0, 80))}`);
    }
  }
  const parsed = stageBankSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'bank'}: ${i.message}`).join('; ');
    throw new Error(`Context "bank" must be {url, username, trustedHostKeys}: ${problems}`);
  }
  return parsed.data;
}

/** `payroll/<environment>/<stage>/bank-link`: each organization's connector secret is named under it. */
export const connectorSecretPrefix = (environment: DeploymentEnvironment, stage: string): string =>
  `payroll/${environment}/${stage}/bank-link`;

/**
 * The disbursement bucket's ARN through the stateful stack's named export, and the id of the cdk-nag finding a pattern
 * under it raises: the same export the service's own object grants use (service-access.ts says why it is named).
 */
export function importedBucketArn(
  scope: Construct,
  bucket: IBucket,
): { arn: string; finding: (pattern: string) => string } {
  const producer = Stack.of(bucket);
  const exportName = `${producer.stackName}-DisbursementBucketArn`;
  if (!producer.node.tryFindChild(`Export${exportName}`)) producer.exportValue(bucket.bucketArn, { name: exportName });
  const consumer = Stack.of(scope);
  if (consumer !== producer) consumer.addStackDependency(producer);
  return {
    arn: Fn.importValue(exportName),
    finding: (pattern) => `AwsSolutions-IAM5[Resource::${exportName}/${pattern}]`,
  };
}

export interface BankConnectorProps {
  readonly environment: DeploymentEnvironment;
  readonly stage: string;
  readonly bucket: IBucket;
  /** The service key, which encrypts the bucket (SSE-KMS). */
  readonly key: IKey;
  readonly removalPolicy: RemovalPolicy;
  readonly bank?: StageBank;
}

export class BankConnector extends Construct {
  /** Assumed by Transfer Family: reads the connectors' secrets, reads and writes `bank-link/` of the bucket. */
  readonly accessRole: Role;
  /** Assumed by Transfer Family: writes the connectors' logs. */
  readonly loggingRole: Role;
  readonly secretPrefix: string;
  readonly connector?: CfnConnector;
  readonly secret?: Secret;
  readonly logGroup?: LogGroup;

  constructor(scope: Construct, id: string, props: BankConnectorProps) {
    super(scope, id);
    const production = props.environment === 'production';
    this.secretPrefix = connectorSecretPrefix(props.environment, props.stage);
    const bucket = importedBucketArn(this, props.bucket);
    const objects = `${BANK_LINK_OBJECT_PREFIX}/*`;
    // Only this account's connectors may assume the roles (the confused-deputy guard AWS documents for Transfer Family).
    const transfer = new ServicePrincipal('transfer.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
    });
    const secretArn = (name: string) =>
      `arn:${Aws.PARTITION}:secretsmanager:${Aws.REGION}:${Aws.ACCOUNT_ID}:secret:${name}`;

    if (props.bank) {
      // A placeholder password the operator replaces with the bank's credential (docs/deploy.md, "Onboarding a bank").
      this.secret = new Secret(this, 'StageConnectorSecret', {
        description: `Payroll ${props.environment}/${props.stage}: the credential of the stage's Transfer Family connector to its bank`,
        generateSecretString: {
          secretStringTemplate: JSON.stringify({ Username: props.bank.username }),
          generateStringKey: 'Password',
          passwordLength: 32,
          excludePunctuation: true,
        },
        removalPolicy: props.removalPolicy,
      });
      Validations.of(this.secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          "The secret holds the bank's SFTP password or key, which the bank issues: it is changed when the bank changes it, not by a rotation function.",
      });
    }

    this.accessRole = new Role(this, 'AccessRole', {
      assumedBy: transfer,
      // The bucket's objects are SSE-KMS under the service key, which S3 uses only for roles under this path.
      path: keyUseRolePath(props.environment, props.stage, { 'disbursement-bucket': 'objects' }),
      description: 'Transfer Family connectors of the bank link: the credential secrets, the bank-link objects',
      inlinePolicies: {
        BankLinkObjects: new PolicyDocument({
          statements: [
            new PolicyStatement({
              sid: 'BankLinkList',
              actions: ['s3:ListBucket'],
              resources: [bucket.arn],
              conditions: { StringLike: { 's3:prefix': [objects] } },
            }),
            // No delete: like every role of the service (service-access.ts), it never removes an object. The ACL
            // actions AWS lists for a connector's role change nothing on this bucket (ACLs are disabled).
            new PolicyStatement({
              sid: 'BankLinkObjects',
              actions: ['s3:GetObject', 's3:GetObjectVersion', 's3:PutObject', 's3:GetObjectAcl', 's3:PutObjectAcl'],
              resources: [`${bucket.arn}/${objects}`],
            }),
            new PolicyStatement({
              sid: 'BankLinkObjectsKey',
              actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
              resources: [props.key.keyArn],
              conditions: { StringEquals: { 'kms:ViaService': `s3.${Aws.REGION}.amazonaws.com` } },
            }),
            new PolicyStatement({
              sid: 'ConnectorSecrets',
              actions: ['secretsmanager:GetSecretValue'],
              resources: [secretArn(`${this.secretPrefix}/*`), ...(this.secret ? [this.secret.secretArn] : [])],
            }),
          ],
        }),
      },
    });
    Validations.of(this.accessRole).acknowledge(
      {
        id: bucket.finding(objects),
        reason: `Object actions can only name objects by key pattern; this one covers the ${BANK_LINK_OBJECT_PREFIX}/ prefix alone, where the bank link stages the files it sends, the listings and what it retrieves.`,
      },
      {
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${this.secretPrefix}/*]`,
        reason:
          'The worker names each organization’s secret <prefix>/<organization id> when it links the organization, and Secrets Manager adds a random suffix to every ARN: the pattern is that prefix alone.',
      },
    );

    // Transfer Family writes a connector's logs to /aws/transfer/<connector id>, a group it makes on first use.
    const logGroups = `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:/aws/transfer/*`;
    this.loggingRole = new Role(this, 'LoggingRole', {
      assumedBy: transfer,
      description: 'Transfer Family connectors of the bank link: their CloudWatch logs',
      inlinePolicies: {
        ConnectorLogs: new PolicyDocument({
          statements: [
            new PolicyStatement({
              effect: Effect.ALLOW,
              actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:DescribeLogStreams', 'logs:PutLogEvents'],
              resources: [logGroups, `${logGroups}:log-stream:*`],
            }),
          ],
        }),
      },
    });
    Validations.of(this.loggingRole).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/transfer/*]',
        reason:
          "Each connector logs to a group named after its id, and the worker makes connectors at run time: the pattern is Transfer Family's log group prefix.",
      },
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/transfer/*:log-stream:*]',
        reason: 'The streams of those groups, which Transfer Family names itself.',
      },
    );

    if (props.bank && this.secret) {
      this.connector = new CfnConnector(this, 'StageConnector', {
        url: props.bank.url,
        accessRole: this.accessRole.roleArn,
        loggingRole: this.loggingRole.roleArn,
        sftpConfig: { userSecretId: this.secret.secretArn, trustedHostKeys: [...props.bank.trustedHostKeys] },
      });
      this.logGroup = new LogGroup(this, 'StageConnectorLogs', {
        logGroupName: `/aws/transfer/${this.connector.attrConnectorId}`,
        retention: production ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH,
        removalPolicy: props.removalPolicy,
      });
      acknowledgeLogGroup(this.logGroup, production);

      const scope = Stack.of(this);
      new CfnOutput(scope, 'BankConnectorEgressIps', {
        value: Fn.join(',', this.connector.attrServiceManagedEgressIpAddresses),
        description:
          'The addresses every Transfer Family connector of this account connects from: give them to each bank for its allow-list',
      });
      new CfnOutput(scope, 'BankConnectorId', { value: this.connector.attrConnectorId });
      new CfnOutput(scope, 'BankConnectorSecretArn', {
        value: this.secret.secretArn,
        description:
          'Put the bank\'s credential here: {"Username": …, "Password": …} or {"Username": …, "PrivateKey": …}',
      });
    }
  }
}
