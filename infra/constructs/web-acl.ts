import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { DeploymentEnvironment } from '../stateful-stack.js';

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
}

/**
 * A regional AWS WAF web ACL in front of one REST API stage: every request is allowed unless its source IP sent
 * more than `rateLimitPer5Min` in the last 5 minutes. A blocked request gets 429 `rate_limited` in the service's
 * envelope with `Retry-After` (WAF answers it itself; it carries no request id, the request never reached the API). CloudWatch metrics and sampled requests are on for the ACL and
 * the rule (AWS/WAFV2 namespace, WebACL and Rule dimensions).
 */
export class StageWebAcl extends Construct {
  readonly webAcl: CfnWebACL;
  readonly association: CfnWebACLAssociation;

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
      description: `Per-source-IP rate limit of ${props.rateLimitPer5Min} requests per 5 minutes in front of the REST API stage`,
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
      ],
    });

    this.association = new CfnWebACLAssociation(this, 'Association', {
      // arn:<partition>:apigateway:<region>::/restapis/<id>/stages/<stage>
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
