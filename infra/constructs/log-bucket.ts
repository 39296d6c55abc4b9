import { Duration, type RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, type ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { controlTower } from '../names.js';

export interface LogBucketProps {
  production: boolean;
  /** What writes into it: CloudFront's standard logs need ACLs (bucket owner preferred), S3 server access logs do not. */
  objectOwnership: ObjectOwnership;
  removalPolicy: RemovalPolicy;
  /** What it holds the logs of, for the reason it is not itself logged. */
  logsOf: string;
}

/**
 * A bucket that receives access logs: private, TLS only, kept 400 days in production and 30 in a sandbox (emptied
 * with the stack). S3-managed keys, because S3 server access logs cannot be delivered to a bucket encrypted with
 * SSE-KMS. It is not access-logged itself, which would only move the question one bucket further.
 */
export function logBucket(scope: Construct, id: string, props: LogBucketProps): Bucket {
  const bucket = new Bucket(scope, id, {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    objectOwnership: props.objectOwnership,
    lifecycleRules: [{ expiration: Duration.days(props.production ? 400 : 30) }],
    removalPolicy: props.removalPolicy,
    autoDeleteObjects: !props.production,
  });
  Validations.of(bucket).acknowledge(
    {
      id: 'AwsSolutions-S1',
      reason: `This bucket is the access log destination of ${props.logsOf}; logging it into another bucket would only move the problem one bucket further.`,
    },
    {
      id: controlTower('s3_bucket_logging_enabled_check'),
      reason: `This bucket is the access log destination of ${props.logsOf}; logging it into another bucket would only move the problem one bucket further.`,
    },
    {
      id: controlTower('s3_bucket_default_encryption_kms_check'),
      reason:
        'S3 server access logs and CloudFront standard logs cannot be delivered to a bucket whose default encryption is SSE-KMS; it is encrypted with S3-managed keys.',
    },
    {
      id: controlTower('s3_bucket_versioning_enabled_check'),
      reason:
        'Log objects are written once by the logging services and never overwritten; versions would only keep copies of files the lifecycle rule is meant to expire.',
    },
    {
      id: controlTower('s3_bucket_object_lock_enabled_check'),
      reason:
        'The logs expire by a lifecycle rule and a sandbox empties this bucket when it is deleted; Object Lock would forbid both.',
    },
    {
      id: controlTower('s3_event_notifications_enabled_check'),
      reason:
        'Nothing reacts to a new log file: the logs are read when someone investigates, not processed as they arrive.',
    },
  );
  return bucket;
}

/**
 * CDK's own function that empties a sandbox's buckets when its stack is deleted (`autoDeleteObjects`), one per
 * stack, if the stack has one.
 */
export function acknowledgeAutoDeleteObjects(stack: Stack): void {
  const provider = stack.node.tryFindChild('Custom::S3AutoDeleteObjectsCustomResourceProvider');
  if (!provider) return;
  Validations.of(provider).acknowledge({
    id: controlTower('lambda_inside_vpc_check'),
    reason:
      "CDK's own function that empties a bucket when its stack is deleted: it calls S3's public endpoint and reaches nothing in a VPC.",
  });
}
