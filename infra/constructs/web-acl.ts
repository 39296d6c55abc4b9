import { ArnFormat, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnLoggingConfiguration, CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { DeploymentEnvironment } from '../stateful-stack.js';
import { acknowledgeLogGroup } from './payroll-function.js';

/**
 * Requests one source IP may make in any 5 minutes before the web ACL blocks it (about 33 a second sustained).
 * It only stops floods from one address, above what the service's own limits allow an organization at the
 * defaults (3 × 500 a minute across its buckets, 7,500 in 5 minutes), so one organization behind one address is
 * never blocked by it; integrators serving many organizations from one NAT address may need
 * `-c wafRateLimitPer5Min=<n>`.
 */
export const DEFAULT_WAF_RATE_LIMIT_PER_5_MIN = 10_000;
/** The seconds a blocked address is told to wait: the rule looks back over 5 minutes. */
export const WAF_RETRY_AFTER_SECONDS = 60;
/** What AWS WAF accepts for a rate-based rule's limit. */
const RATE_LIMIT_RANGE = { min: 10, max: 2_000_000_000 } as const;

/**
 * The AWS managed rule groups the web ACL runs after the rate rule, in this order, each with its own metric and with
 * the group's own actions (override action none). About 930 of the web ACL's 1,500 capacity units with the rate rule.
 * - AWSManagedRulesCommonRuleSet: OWASP-style checks (cross-site scripting, local and remote file inclusion, bad
 *   bots' user agents, oversized parts). Its rules in COMMON_RULE_SET_COUNT_ONLY only count.
 * - AWSManagedRulesKnownBadInputsRuleSet: request patterns of known exploits (Log4j's JNDI lookups, Java
 *   deserialization, Host header tricks).
 * - AWSManagedRulesAmazonIpReputationList: addresses Amazon's threat intelligence lists as sources of bots and attacks.
 */
export const MANAGED_RULE_GROUPS = [
  'AWSManagedRulesCommonRuleSet',
  'AWSManagedRulesKnownBadInputsRuleSet',
  'AWSManagedRulesAmazonIpReputationList',
] as const;

/**
 * Rules of the common rule set that count instead of blocking. `SizeRestrictions_BODY` blocks any body over 8 KB,
 * and the service's own bodies are larger by design: a payroll submission of up to 25,000 employees (megabytes), a
 * bank's return file (NACHA text, 94 characters a record, posted as it is). API Gateway (10 MB) and Lambda (6 MB)
 * already cap a body, and the handlers answer a body over their limits 413 in the service's envelope; counted, the
 * rule still shows in the ACL's metrics and logs how many large bodies arrive. (WAF inspects only a body's first
 * 8 KB in any case: the group's other body rules see the start of a large body.) `GenericRFI_BODY` blocks a body
 * holding a URL whose host is an IP address, which a webhook registration may lawfully name (the service checks
 * every webhook address itself, at registration and delivery); `NoUserAgent_HEADER` blocks clients that send no
 * `User-Agent`, which server-to-server API clients often omit. Counted, so they show what they would have blocked.
 */
export const COMMON_RULE_SET_COUNT_ONLY = ['SizeRestrictions_BODY', 'GenericRFI_BODY', 'NoUserAgent_HEADER'] as const;

export interface WebAclSettings {
  /** Requests per source IP in a 5-minute window before the rate rule blocks. */
  readonly rateLimitPer5Min: number;
}

/**
 * The web ACL settings from the CDK context: `-c waf=false` leaves the ACL out, in a sandbox only (production
 * always has it: asking for less throws); `-c wafRateLimitPer5Min=<n>` sets the per-IP limit (default
 * DEFAULT_WAF_RATE_LIMIT_PER_5_MIN). `undefined` when the ACL is off.
 */
export function webAclSettings(scope: Construct, environment: DeploymentEnvironment): WebAclSettings | undefined {
  // `-c waf=false` arrives as a string; cdk.json or a test's App context may hold a boolean.
  const waf = String(scope.node.tryGetContext('waf') ?? true);
  if (waf !== 'true' && waf !== 'false') throw new Error(`Context "waf" must be true or false; got "${waf}"`);
  if (waf === 'false') {
    if (environment === 'production') {
      throw new Error('Context "waf=false" is refused in production: the production API stage always has its web ACL');
    }
    return undefined;
  }
  const raw = scope.node.tryGetContext('wafRateLimitPer5Min') as unknown;
  const rateLimitPer5Min =
    raw === undefined
      ? DEFAULT_WAF_RATE_LIMIT_PER_5_MIN
      : typeof raw === 'number'
        ? raw
        : typeof raw === 'string' && /^\d+$/.test(raw)
          ? Number(raw)
          : Number.NaN;
  if (
    !Number.isInteger(rateLimitPer5Min) ||
    rateLimitPer5Min < RATE_LIMIT_RANGE.min ||
    rateLimitPer5Min > RATE_LIMIT_RANGE.max
  ) {
    throw new Error(
      `Context "wafRateLimitPer5Min" must be a whole number from ${RATE_LIMIT_RANGE.min} to ${RATE_LIMIT_RANGE.max}; got "${String(raw)}"`,
    );
  }
  return { rateLimitPer5Min };
}

export interface StageWebAclProps extends WebAclSettings {
  /** The REST API stage the ACL protects. */
  readonly stage: Stage;
  /** The web ACL's name, also the prefix of its CloudWatch metric names, e.g. `payroll-production-main-api`. */
  readonly name: string;
  /** The name of the log group the ACL logs to; WAF requires it to start with `aws-waf-logs-`. */
  readonly logGroupName: string;
  /** Production keeps the log a year, a sandbox a month, as every log group of the service. */
  readonly production: boolean;
  /** What happens to the log group when the stack is deleted. */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * A regional AWS WAF web ACL in front of one REST API stage. A source IP that sent more than `rateLimitPer5Min`
 * requests in the last 5 minutes is blocked with 429 `rate_limited` in the service's envelope with `Retry-After` (WAF
 * answers it itself; it carries no request id, the request never reached the API). Then the AWS managed rule groups
 * (MANAGED_RULE_GROUPS) block what they match; API Gateway answers those 403 `forbidden` in the service's envelope
 * (its WAF_FILTERED response, api-stack.ts). Everything else is allowed. CloudWatch metrics and sampled requests are
 * on for the ACL and each rule (AWS/WAFV2 namespace, WebACL and Rule dimensions), and every request is logged to a
 * CloudWatch log group, its `authorization` header (the bearer API key) redacted.
 */
export class StageWebAcl extends Construct {
  readonly webAcl: CfnWebACL;
  readonly association: CfnWebACLAssociation;
  readonly logGroup: LogGroup;
  readonly logging: CfnLoggingConfiguration;

  constructor(scope: Construct, id: string, props: StageWebAclProps) {
    super(scope, id);
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      metricName,
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
    });

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: props.name,
      // WAF allows no parentheses here.
      description: `Per-source-IP rate limit of ${props.rateLimitPer5Min} requests per 5 minutes, then the AWS managed common, known bad inputs and IP reputation rules, in front of the REST API stage`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      customResponseBodies: {
        'rate-limited': {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            status: 429,
            error: {
              code: 'rate_limited',
              message: 'Too Many Requests',
              details: [
                {
                  code: 'rate_limited',
                  message: `Too many requests from this address: retry in ${WAF_RETRY_AFTER_SECONDS} s`,
                },
              ],
              retry_after: WAF_RETRY_AFTER_SECONDS,
            },
          }),
        },
      },
      visibilityConfig: visibility(props.name),
      rules: [
        {
          name: 'RateLimitPerSourceIp',
          priority: 0,
          // 429 with Retry-After and the service's error envelope, as the service's own rate limits answer, so
          // clients back off and retry instead of taking it for a refusal.
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: 'rate-limited',
                responseHeaders: [{ name: 'Retry-After', value: String(WAF_RETRY_AFTER_SECONDS) }],
              },
            },
          },
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              limit: props.rateLimitPer5Min,
              evaluationWindowSec: 300,
            },
          },
          visibilityConfig: visibility(`${props.name}-rate-limit-per-ip`),
        },
        ...MANAGED_RULE_GROUPS.map(
          (group, i): CfnWebACL.RuleProperty => ({
            name: group,
            priority: i + 1,
            // The group's own actions (block), but for the rules COMMON_RULE_SET_COUNT_ONLY names.
            overrideAction: { none: {} },
            statement: {
              managedRuleGroupStatement: {
                vendorName: 'AWS',
                name: group,
                ...(group === 'AWSManagedRulesCommonRuleSet' && {
                  ruleActionOverrides: COMMON_RULE_SET_COUNT_ONLY.map((rule) => ({
                    name: rule,
                    actionToUse: { count: {} },
                  })),
                }),
              },
            },
            visibilityConfig: visibility(`${props.name}-${group}`),
          }),
        ),
      ],
    });

    this.association = new CfnWebACLAssociation(this, 'Association', {
      // arn:<partition>:apigateway:<region>::/restapis/<id>/stages/<stage>
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });

    if (!props.logGroupName.startsWith('aws-waf-logs-')) {
      throw new Error(
        `AWS WAF logs only to a log group whose name starts with aws-waf-logs-; got ${props.logGroupName}`,
      );
    }
    // Encrypted and kept as every log group of the service (CloudWatch Logs' own keys; a year in production).
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: props.logGroupName,
      retention: props.production ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy,
    });
    acknowledgeLogGroup(this.logGroup, props.production);
    // WAF takes the log group's ARN without the `:*` CDK's logGroupArn ends in. It adds the log group to the
    // account's resource policy for log delivery itself (with the deployer's permissions).
    this.logging = new CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      logDestinationConfigs: [
        Stack.of(this).formatArn({
          service: 'logs',
          resource: 'log-group',
          resourceName: this.logGroup.logGroupName,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
      // Every request carries a bearer API key there; WAF logs every header otherwise.
      redactedFields: [{ singleHeader: { Name: 'authorization' } }],
    });
  }
}
