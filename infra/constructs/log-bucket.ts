import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, type ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

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
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions-S1',
    reason: `This bucket is the access log destination of ${props.logsOf}; logging it into another bucket would only move the problem one bucket further.`,
  });
  return bucket;
}
