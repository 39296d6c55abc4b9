import {
  CfnOutput,
  DefaultStackSynthesizer,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import {
  AllowedMethods,
  CachedMethods,
  CachePolicy,
  Distribution,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  PriceClass,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct, IConstruct } from 'constructs';
import { bundleDashboardSync, DASHBOARD_DIR, type DashboardConfig, writeDashboard } from '../dashboard/build.js';
import { ASSET_CACHE_CONTROL, dashboardCsp, PAGE_CACHE_CONTROL } from './dashboard-headers.js';
import type { DeploymentEnvironment } from './stateful-stack.js';
import { acknowledgeAutoDeleteObjects, logBucket } from './constructs/log-bucket.js';
import { bundledLocally } from './constructs/local-bundling.js';
import { acknowledgeLogGroup } from './constructs/payroll-function.js';
import { controlTower } from './names.js';

export interface DashboardStackProps extends StackProps {
  readonly environment: DeploymentEnvironment;
  readonly stage: string;
  /** The API the site calls: its base URL (written into the site's config.json) and its REST API id (for the CSP). */
  readonly api: { readonly apiUrl: string; readonly restApiId: string };
}

/**
 * The developer dashboard as a static site: a private, encrypted S3 bucket that only this CloudFront distribution
 * can read (origin access control), served over HTTPS only with security headers, and filled at deploy time with
 * the build of dashboard/ plus a config.json naming the API. The site calls the API on its own origin, so the API
 * answers CORS (api-stack.ts).
 */
export class DashboardStack extends Stack {
  readonly siteBucket: Bucket;
  readonly logsBucket: Bucket;
  readonly distribution: Distribution;
  readonly responseHeadersPolicy: ResponseHeadersPolicy;
  /** https://<distribution domain>: where the dashboard is. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: DashboardStackProps) {
    super(scope, id, props);
    const production = props.environment === 'production';

    // CloudFront's standard logs are written with ACLs, so this bucket keeps them enabled (bucket owner preferred).
    this.logsBucket = logBucket(this, 'LogsBucket', {
      production,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      removalPolicy: production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      logsOf: 'the site bucket and the distribution',
    });

    // Nothing in it that a build cannot recreate, so it goes with the stack, emptied first.
    this.siteBucket = new Bucket(this, 'SiteBucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.logsBucket,
      serverAccessLogsPrefix: 'site-bucket/',
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: true,
    });
    const rebuilt = 'Every deployment rebuilds its content from the repository';
    Validations.of(this.siteBucket).acknowledge(
      {
        id: controlTower('s3_bucket_versioning_enabled_check'),
        reason: `${rebuilt}, which is its history; old versions of public pages would only accumulate.`,
      },
      {
        id: controlTower('s3_lifecycle_policy_check'),
        reason: `${rebuilt}; the hashed assets of earlier builds are kept on purpose, for pages still open in a browser, and nothing tells a stale one from a live one by age.`,
      },
      {
        id: controlTower('s3_bucket_default_encryption_kms_check'),
        reason:
          'The bucket holds the static build of a public single-page application (no data); S3-managed keys keep CloudFront able to read it without a key policy for CloudFront.',
      },
      {
        id: controlTower('s3_bucket_object_lock_enabled_check'),
        reason: `${rebuilt} and replaces its pages; Object Lock would forbid that, and the stack empties the bucket when it is deleted.`,
      },
      {
        id: controlTower('s3_event_notifications_enabled_check'),
        reason:
          'Nothing reacts to a new file: CloudFront serves the files and the deployment invalidates what it changed.',
      },
    );
    acknowledgeAutoDeleteObjects(this);

    const apiOrigin = `https://${props.api.restApiId}.execute-api.${this.region}.${this.urlSuffix}`;
    this.responseHeadersPolicy = new ResponseHeadersPolicy(this, 'SecurityHeaders', {
      comment: `Payroll dashboard ${props.environment}/${props.stage}: security headers`,
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: dashboardCsp(apiOrigin), override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
      },
    });

    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Payroll dashboard ${props.environment}/${props.stage}`,
      defaultRootObject: 'index.html',
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.siteBucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachedMethods: CachedMethods.CACHE_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: this.responseHeadersPolicy,
        compress: true,
      },
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: this.logsBucket,
      logFilePrefix: 'distribution/',
    });
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason:
          'The dashboard is for the organization’s developers wherever they work; the API behind it enforces who may do what.',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'A static site with no server-side logic: every request it makes goes to the API, which authenticates, rate-limits and is throttled per stage. A web ACL is a per-account cost decision left to the production rollout, as for the API.',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'The distribution uses its *.cloudfront.net domain, whose default certificate cannot set a minimum TLS version; a custom domain with an ACM certificate and TLSv1.2_2021 is the production rollout’s choice.',
      },
      ...[
        'cloudfront_custom_ssl_certificate_check',
        'cloudfront_sni_enabled_check',
        'cloudfront_security_policy_check',
      ].map((rule) => ({
        id: controlTower(rule),
        reason:
          'The distribution uses its *.cloudfront.net domain and CloudFront’s default certificate, which has no SNI or security-policy setting; a custom domain with an ACM certificate (SNI, TLSv1.2_2021) is the production rollout’s choice.',
      })),
      {
        id: controlTower('cloudfront_origin_failover_enabled_check'),
        reason:
          'One static origin in one bucket, cached by CloudFront; a replicated second bucket and an origin group are out of proportion for a developer dashboard whose API is itself in one region.',
      },
    );
    this.url = `https://${this.distribution.distributionDomainName}`;

    // The build of dashboard/, made at synth by esbuild on this machine (no Docker). Deployed in two steps: the
    // hashed assets first (kept across deployments, so a page still open in a browser finds its files), then the
    // pages and config.json, which reference them.
    const site = Source.asset(
      DASHBOARD_DIR,
      bundledLocally('dashboard', (outputDir) => {
        // config.json comes from the deployment below, with this stage's API URL.
        writeDashboard(
          bundleDashboardSync().filter((f) => f.path !== 'config.json'),
          outputDir,
        );
      }),
    );
    const config: DashboardConfig = { api_base_url: props.api.apiUrl };
    const assets = new BucketDeployment(this, 'DeployAssets', {
      sources: [site],
      destinationBucket: this.siteBucket,
      exclude: ['*'],
      include: ['assets/*'],
      prune: false,
      cacheControl: [CacheControl.fromString(ASSET_CACHE_CONTROL)],
    });
    const pages = new BucketDeployment(this, 'DeployPages', {
      sources: [site, Source.jsonData('config.json', config)],
      destinationBucket: this.siteBucket,
      exclude: ['assets/*'],
      cacheControl: [CacheControl.fromString(PAGE_CACHE_CONTROL)],
      distribution: this.distribution,
      distributionPaths: ['/', '/index.html', '/config.json'],
    });
    pages.node.addDependency(assets);
    acknowledgeDeploymentHandler(this, this.siteBucket);

    new CfnOutput(this, 'DashboardUrl', {
      value: this.url,
      description: 'The developer dashboard: sign in with an admin token',
    });
    new CfnOutput(this, 'DistributionId', { value: this.distribution.distributionId });
    new CfnOutput(this, 'SiteBucketName', { value: this.siteBucket.bucketName });
  }
}

/**
 * BucketDeployment's function is CDK's own (one per stack, shared by both deployments): its role and runtime are
 * CDK's choice, not this project's. Its grants: read the staged asset in CDK's bootstrap bucket, write the site
 * bucket, invalidate the distribution.
 */
function acknowledgeDeploymentHandler(stack: Stack, siteBucket: Bucket): void {
  const qualifier = String(
    stack.node.tryGetContext('@aws-cdk/core:bootstrapQualifier') ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER,
  );
  const siteBucketId = stack.getLogicalId(siteBucket.node.defaultChild as CfnBucket);
  const wildcards = [
    'Action::s3:GetBucket*',
    'Action::s3:GetObject*',
    'Action::s3:List*',
    'Action::s3:Abort*',
    'Action::s3:DeleteObject*',
    `Resource::arn:<AWS::Partition>:s3:::cdk-${qualifier}-assets-<AWS::AccountId>-<AWS::Region>/*`,
    `Resource::<${siteBucketId}.Arn>/*`,
  ];
  const handlers = stack.node.children.filter((c: IConstruct) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
  for (const handler of handlers) {
    Validations.of(handler).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: 'CDK’s BucketDeployment function: the AWS-maintained policy that lets it write its own logs.',
      },
      ...wildcards.map((finding) => ({
        id: `AwsSolutions-IAM5[${finding}]`,
        reason:
          'CDK’s BucketDeployment function syncs the site’s asset from the CDK staging bucket into the site bucket (prune included): CDK grants object and action wildcards confined to those two buckets.',
      })),
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'CDK’s BucketDeployment function invalidates the distribution after a deployment: CDK grants cloudfront:CreateInvalidation and GetInvalidation without a resource.',
      },
      {
        id: 'AwsSolutions-L1',
        reason:
          'CDK’s BucketDeployment function runs the Python runtime CDK pins for it (it bundles the AWS CLI layer), not one this project chooses.',
      },
      {
        id: controlTower('lambda_inside_vpc_check'),
        reason:
          'CDK’s BucketDeployment function copies the site from CDK’s staging bucket into the site bucket and invalidates the distribution, on public endpoints; it reaches nothing in a VPC.',
      },
    );
    const logGroup = handler.node.tryFindChild('LogGroup');
    if (logGroup instanceof LogGroup) acknowledgeLogGroup(logGroup, true);
  }
}
