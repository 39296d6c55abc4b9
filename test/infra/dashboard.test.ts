import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { DashboardStack } from '../../infra/dashboard-stack.js';
import { ASSET_CACHE_CONTROL, PAGE_CACHE_CONTROL } from '../../infra/dashboard-headers.js';

/**
 * The dashboard's static site: a private bucket only CloudFront reads, HTTPS only, security headers, and the
 * build deployed in two steps. Built on its own (with a literal API), with the cdk-nag checks the app runs.
 */
const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }
).context;
const API = { apiUrl: 'https://abc123defg.execute-api.eu-west-1.amazonaws.com/test', restApiId: 'abc123defg' };

function build(environment: 'sandbox' | 'production', bundle = false) {
  const app = new App({ context: { ...CDK_CONTEXT, ...(!bundle && { 'aws:cdk:bundling-stacks': [] }) } });
  const stack = new DashboardStack(app, `Payroll-${environment}-test-Dashboard`, {
    environment,
    stage: 'test',
    api: API,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
  // Synthesizes the app, so an unacknowledged AwsSolutions error throws here.
  return { app, stack, template: Template.fromStack(stack) };
}

const sandbox = build('sandbox');
type Resources = Record<string, { Type: string; Properties?: Record<string, any>; DeletionPolicy?: string }>;
const resources = sandbox.template.toJSON().Resources as Resources;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const idOf = (construct: { node: { defaultChild?: unknown } }) =>
  sandbox.stack.getLogicalId(construct.node.defaultChild as never);

describe('dashboard stack', () => {
  it('keeps the site in a private, encrypted bucket that refuses plain HTTP and is no website', () => {
    const site = resources[idOf(sandbox.stack.siteBucket)]!;
    expect(site.Properties!.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(
      site.Properties!.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm,
    ).toBe('AES256');
    expect(site.Properties!.WebsiteConfiguration).toBeUndefined();
    expect(site.Properties!.LoggingConfiguration.DestinationBucketName).toEqual({
      Ref: idOf(sandbox.stack.logsBucket),
    });

    const policies = ofType('AWS::S3::BucketPolicy').filter(
      ([, p]) => JSON.stringify(p.Properties!.Bucket) === JSON.stringify({ Ref: idOf(sandbox.stack.siteBucket) }),
    );
    expect(policies).toHaveLength(1);
    const statements = policies[0]![1].Properties!.PolicyDocument.Statement as {
      Effect: string;
      Principal: any;
      Action: string | string[];
      Condition?: any;
    }[];
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    // The only reader: this distribution, through origin access control.
    const allows = statements.filter((s) => s.Effect === 'Allow' && !JSON.stringify(s.Principal).includes('lambda'));
    const reads = allows.filter((s) => JSON.stringify(s.Principal).includes('cloudfront.amazonaws.com'));
    expect(reads).toHaveLength(1);
    expect(reads[0]!.Action).toBe('s3:GetObject');
    expect(JSON.stringify(reads[0]!.Condition)).toContain(idOf(sandbox.stack.distribution));
    for (const s of allows) expect(JSON.stringify(s.Principal)).not.toBe('"*"');
  });

  it('serves over HTTPS only (HTTP redirects), through origin access control, with index.html at the root and access logs', () => {
    const [, distribution] = ofType('AWS::CloudFront::Distribution')[0]!;
    const config = distribution.Properties!.DistributionConfig;
    expect(config.DefaultCacheBehavior.ViewerProtocolPolicy).toBe('redirect-to-https');
    for (const behavior of config.CacheBehaviors ?? []) expect(behavior.ViewerProtocolPolicy).toBe('redirect-to-https');
    expect(config.DefaultCacheBehavior.AllowedMethods).toEqual(['GET', 'HEAD']);
    expect(config.DefaultRootObject).toBe('index.html');
    expect(config.Origins).toHaveLength(1);
    expect(config.Origins[0].OriginAccessControlId).toBeDefined();
    expect(config.Origins[0].S3OriginConfig).toEqual({ OriginAccessIdentity: '' });
    expect(config.Logging.Bucket).toBeDefined();
    sandbox.template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: {
        OriginAccessControlOriginType: 's3',
        SigningBehavior: 'always',
        SigningProtocol: 'sigv4',
      },
    });
  });

  it('sends security headers: a CSP that allows only the site and the API, HSTS, no framing, no sniffing, no referrer', () => {
    const [, policy] = ofType('AWS::CloudFront::ResponseHeadersPolicy')[0]!;
    const headers = policy.Properties!.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    const csp = JSON.stringify(headers.ContentSecurityPolicy.ContentSecurityPolicy);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain(`connect-src 'self' https://${API.restApiId}.execute-api.`);
    expect(headers.ContentSecurityPolicy.Override).toBe(true);
    expect(headers.StrictTransportSecurity).toMatchObject({
      AccessControlMaxAgeSec: 31_536_000,
      IncludeSubdomains: true,
      Override: true,
    });
    expect(headers.FrameOptions).toEqual({ FrameOption: 'DENY', Override: true });
    expect(headers.ContentTypeOptions).toEqual({ Override: true });
    expect(headers.ReferrerPolicy).toEqual({ ReferrerPolicy: 'no-referrer', Override: true });
    const [, distribution] = ofType('AWS::CloudFront::Distribution')[0]!;
    expect(distribution.Properties!.DistributionConfig.DefaultCacheBehavior.ResponseHeadersPolicyId).toEqual({
      Ref: ofType('AWS::CloudFront::ResponseHeadersPolicy')[0]![0],
    });
  });

  it('deploys the hashed assets first and for good, then the pages and config.json, invalidating only those', () => {
    const deployments = ofType('Custom::CDKBucketDeployment');
    expect(deployments).toHaveLength(2);
    const assets = deployments.find(([, d]) => JSON.stringify(d.Properties!.Include) === '["assets/*"]');
    const pages = deployments.find(([, d]) => JSON.stringify(d.Properties!.Exclude) === '["assets/*"]');
    expect(assets).toBeDefined();
    expect(pages).toBeDefined();
    expect(assets![1].Properties).toMatchObject({
      Exclude: ['*'],
      Prune: false,
      SystemMetadata: { 'cache-control': ASSET_CACHE_CONTROL },
    });
    expect(assets![1].Properties!.DistributionId).toBeUndefined();
    expect(pages![1].Properties).toMatchObject({
      SystemMetadata: { 'cache-control': PAGE_CACHE_CONTROL },
      DistributionPaths: ['/', '/index.html', '/config.json'],
    });
    expect(pages![1].Properties!.DistributionId).toEqual({ Ref: idOf(sandbox.stack.distribution) });
    expect((resources[pages![0]] as { DependsOn?: string[] }).DependsOn).toEqual(expect.arrayContaining([assets![0]]));
    // Two sources for the pages: the site and config.json (written with the API's URL at deploy time).
    expect(pages![1].Properties!.SourceObjectKeys).toHaveLength(2);
  });

  it('outputs the dashboard URL', () => {
    sandbox.template.hasOutput('DashboardUrl', {
      Value: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [idOf(sandbox.stack.distribution), 'DomainName'] }]] },
    });
  });

  it('keeps the access logs in production and lets a sandbox go whole', () => {
    const production = build('production');
    const logs = (production.template.toJSON().Resources as Resources)[
      production.stack.getLogicalId(production.stack.logsBucket.node.defaultChild as never)
    ]!;
    expect(logs.DeletionPolicy).toBe('Retain');
    expect(resources[idOf(sandbox.stack.logsBucket)]!.DeletionPolicy).toBe('Delete');
  });

  it('builds the site at synth with esbuild on this machine, without config.json (the deployment writes it)', () => {
    const bundled = build('sandbox', true);
    const out = bundled.app.synth().directory;
    const assetDirs = readdirSync(out).filter((d) => d.startsWith('asset.') && existsSync(join(out, d, 'index.html')));
    expect(assetDirs).toHaveLength(1);
    const dir = join(out, assetDirs[0]!);
    const html = readFileSync(join(dir, 'index.html'), 'utf8');
    const script = /src="\.\/(assets\/app-[^"]+\.js)"/.exec(html)?.[1];
    const styles = /href="\.\/(assets\/app-[^"]+\.css)"/.exec(html)?.[1];
    expect(script && existsSync(join(dir, script))).toBe(true);
    expect(styles && existsSync(join(dir, styles))).toBe(true);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });
});
