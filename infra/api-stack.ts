import { Aws, CfnOutput, Fn, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  type CfnRestApi,
  EndpointType,
  type IResource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { SERVICE_NAME } from '../shared/adapters/metric-names.js';
import { TABLE_ACCESS } from '../shared/api/table-access.js';
import type { FunctionName, RouteDef } from '../shared/api/route.js';
import { functionsOf, ROUTES } from '../shared/api/routes.js';
import { AuditLogIngestion } from './constructs/audit-log-ingestion.js';
import { Alarms } from './constructs/monitoring.js';
import { acknowledgeLogGroup, PayrollFunction } from './constructs/payroll-function.js';
import { grantAccess, grantTable, type ServiceResources } from './constructs/service-access.js';
import { StageWebAcl, webAclSettings } from './constructs/web-acl.js';
import type { DeploymentEnvironment } from './stateful-stack.js';
import { accessOf, apiHandlerOf } from './lambda-functions.js';
import { controlTower, deploymentName, pascal } from './names.js';

/**
 * What every function of the service is told, whatever it is granted: its environment, and the service name and
 * namespace Powertools stamps on its log lines and business metrics (one namespace per deployment, the alarms and
 * the dashboard read the metrics there: constructs/monitoring.ts).
 */
export function baseEnvironment(environment: DeploymentEnvironment, stage: string): Record<string, string> {
  return {
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    POWERTOOLS_METRICS_NAMESPACE: deploymentName(environment, stage),
    PAYROLL_ENVIRONMENT: environment,
  };
}

/**
 * The unique id of the stack's instance: the last part of its stack id
 * (`arn:aws:cloudformation:<region>:<account>:stack/<name>/<id>`), which a stack created again under the same name
 * does not share. Part of the fixed names of what the stack keeps when it is deleted, so the next create never
 * collides with them.
 */
export function stackInstanceId(): string {
  return Fn.select(2, Fn.split('/', Aws.STACK_ID));
}

/** The stage-wide ceiling in front of the per-token rate limits the handlers enforce. */
export const STAGE_THROTTLING = { rateLimit: 1000, burstLimit: 2000 } as const;

export interface ApiStackProps extends StackProps, ServiceResources {
  readonly environment: DeploymentEnvironment;
  readonly stage: string;
  /** The deployment's alarm topic (stateful stack): every alarm of this stack notifies it. */
  readonly alarmTopic: ITopic;
  /** @default ROUTES; the tests pass a table that uses every kind of access. */
  readonly routes?: readonly RouteDef[];
  /**
   * The origin browsers may call the API from (CORS), for the developer dashboard. `*` by default: every request
   * carries a bearer token in its Authorization header and no cookie, so a page on another origin gains nothing
   * a script outside a browser would not have (GitHub's REST API answers `*` for the same reason). A fixed
   * origin (a dashboard on a custom domain) narrows it.
   */
  readonly corsAllowOrigin?: string;
}

/**
 * The REST API generated from the route declarations: one function per resource group (functions/api/<name>.ts),
 * each serving its routes behind a router and holding a role with the union of their grants. The `docs` function
 * also answers what no route claims, on ANY of every resource: unknown paths (404) and known paths with another
 * method (405) in the service's envelope. API Gateway prefers an explicit method over ANY.
 */
export class ApiStack extends Stack {
  readonly api: RestApi;
  /** By name: `employees`, `payroll`, … and `docs`, which also answers what no route claims. */
  readonly functions: Partial<Record<FunctionName, PayrollFunction>> = {};

  /**
   * Where the API functions' log groups are named: `/payroll/<stack>/routes/<instance>/<Function>` (`Employees`,
   * `Payroll`…), `<instance>` being the unique id CloudFormation gave this stack when it created it (the last part of
   * its stack id). Production keeps the log groups when the stack is deleted; a stack created again under the same
   * name gets a new id, so its log groups get new names instead of failing on the kept ones ("already exists").
   */
  readonly routeLogGroupPrefix: string;
  readonly auditLog: AuditLogIngestion;
  /** The AWS WAF web ACL on the stage; absent only in a sandbox deployed with `-c waf=false` (constructs/web-acl.ts). */
  readonly webAcl?: StageWebAcl;
  /** The URL clients prefix paths with: `<apiUrl>/v1/employees`. */
  readonly apiUrl: string;

  private readonly props: ApiStackProps;
  /** props.corsAllowOrigin, `*` by default: stamped by the functions and on API Gateway's own answers alike. */
  private readonly corsOrigin: string;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    this.props = props;
    this.routeLogGroupPrefix = `/payroll/${this.stackName}/routes/${stackInstanceId()}/`;
    const production = props.environment === 'production';
    // Logs and parked audit lines are kept when the stack goes, but not by a create that rolls back: nothing in them
    // is worth keeping then.
    const removalPolicy = production ? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE : RemovalPolicy.DESTROY;

    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: production ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH,
      removalPolicy,
    });
    acknowledgeLogGroup(accessLogs, production);

    // CORS (shared/http/cors.ts): every function stamps the origin on its answers, and the fallback, which already
    // gets every method no route claims, answers the preflights. API Gateway's own preflight mocks would add an
    // OPTIONS method per resource to a stack that CloudFormation caps at 500 resources.
    this.corsOrigin = props.corsAllowOrigin ?? '*';
    this.api = new RestApi(this, 'Api', {
      // Paystub PDFs leave the function base64-encoded; API Gateway sends them as bytes to a client that accepts them.
      binaryMediaTypes: ['application/pdf'],
      restApiName: `payroll-${props.environment}-${props.stage}`,
      description: `Payroll API (${props.environment}/${props.stage})`,
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // No custom domain: the execute-api endpoint is the API's address.
      disableExecuteApiEndpoint: false,
      // Execution and access logs need the account-level API Gateway CloudWatch role. Retained, because it is
      // one setting per account and region that other stacks (other sandboxes) rely on after this one is gone.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: props.stage,
        tracingEnabled: true,
        metricsEnabled: true,
        // Errors only and never the data trace: request bodies carry bank account numbers.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            extendedRequestId: AccessLogField.contextExtendedRequestId(),
            requestTime: AccessLogField.contextRequestTime(),
            ip: AccessLogField.contextIdentitySourceIp(),
            // No user agent: whatever a client sends there is logged unredacted (the function's line redacts it).
            httpMethod: AccessLogField.contextHttpMethod(),
            // The route template only: a path can carry what a client should never have put there (a token, an
            // account number), and API Gateway cannot redact it. The function's own line has the redacted path.
            resourcePath: AccessLogField.contextResourcePath(),
            protocol: AccessLogField.contextProtocol(),
            status: AccessLogField.contextStatus(),
            responseLength: AccessLogField.contextResponseLength(),
            responseLatency: AccessLogField.contextResponseLatency(),
            integrationLatency: AccessLogField.contextIntegrationLatency(),
            integrationStatus: AccessLogField.contextIntegrationStatus(),
            errorType: AccessLogField.contextErrorResponseType(),
            errorMessage: AccessLogField.contextErrorMessageString(),
            xrayTraceId: AccessLogField.contextXrayTraceId(),
          }),
        ),
        throttlingRateLimit: STAGE_THROTTLING.rateLimit,
        throttlingBurstLimit: STAGE_THROTTLING.burstLimit,
      },
    });
    // The L2 construct has no property for it yet; the execute-api endpoint refuses TLS below 1.2.
    (this.api.node.defaultChild as CfnRestApi).securityPolicy = 'TLS_1_2';

    this.addGatewayResponses();

    // Build the resource tree from the route paths as given (they already start with /v1).
    const resources = new Map<string, IResource>([['/', this.api.root]]);
    const resourceFor = (path: string): IResource => {
      let current: IResource = this.api.root;
      let sofar = '';
      for (const segment of path.split('/').filter(Boolean)) {
        sofar += `/${segment}`;
        let next = resources.get(sofar);
        if (!next) {
          next = current.addResource(segment);
          resources.set(sofar, next);
        }
        current = next;
      }
      return current;
    };

    // One function per resource group. Its invoke permission covers this API (one permission per function, not
    // one per method): API Gateway only sends it the methods declared for it, and its router answers 404/405 to
    // anything else, so narrowing the permission to each method would add a resource per route and no safety.
    const groups = [...functionsOf(props.routes ?? ROUTES)];
    // The docs function also answers what no route claims, so there is one even if no route is served by it.
    if (!groups.some((g) => g.name === 'docs')) groups.push({ name: 'docs', routes: [] });
    for (const { name, routes: served } of groups) {
      const fn = this.apiFunction(name, served, removalPolicy);
      const integration = new LambdaIntegration(fn.function, { scopePermissionToMethod: false });
      for (const route of served)
        resourceFor(route.path).addMethod(route.method, integration, { operationName: route.id });
    }

    // Every authenticated function's audit lines reach the table through its log group (the docs function
    // authenticates nobody, so it writes none): constructs/audit-log-ingestion.ts.
    this.auditLog = new AuditLogIngestion(this, 'AuditLog', {
      resources: props,
      sources: groups.filter((g) => g.name !== 'docs').map((g) => this.functions[g.name]!),
      sourceLogGroupPrefix: this.routeLogGroupPrefix,
      environment: this.baseEnvironment(),
      removalPolicy,
    });

    const fallbackIntegration = new LambdaIntegration(this.functions.docs!.function, {
      scopePermissionToMethod: false,
    });
    // Anything no route claims goes to the fallback: ANY on every resource (known path, other method → 405)
    // and a greedy proxy under the root (unknown path → 404).
    resources.set('/{proxy+}', this.api.root.addResource('{proxy+}'));
    for (const resource of resources.values()) resource.addMethod('ANY', fallbackIntegration);

    Validations.of(this.api).acknowledge(
      {
        // The functions' invoke permissions, one per function (LambdaIntegration), are children of the API.
        id: controlTower('lambda_function_public_access_prohibited_check'),
        reason:
          "Each function's invoke permission names API Gateway with this API's execute-api ARN as SourceArn, rendered as an Fn::Join the rule does not read as a value: only this API may invoke the function.",
      },
      {
        id: 'AwsSolutions-APIG2',
        reason:
          "Each handler validates its body, query and path with zod and answers every problem at once in the service's JSON error envelope; an API Gateway validator would answer first, in another shape, with one problem.",
      },
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'Callers present organization-scoped bearer API keys; every route handler verifies the key against its stored hash, checks the route scope and applies the rate limit (shared/http/middleware/authenticate.ts). The 404/405 fallback must answer without a token.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'The API is for machine clients holding API keys issued by the service itself, not Cognito users; see the AwsSolutions-APIG4 acknowledgment.',
      },
    );
    // A per-source-IP rate limit in front of the stage (`-c wafRateLimitPer5Min`); a sandbox may go without it
    // (`-c waf=false`), production never.
    const waf = webAclSettings(this, props.environment);
    if (waf) {
      this.webAcl = new StageWebAcl(this, 'WebAcl', {
        stage: this.api.deploymentStage,
        name: `payroll-${props.environment}-${props.stage}-api`,
        // WAF delivers to log groups named aws-waf-logs-…: a fixed name, so it carries the stack's instance too.
        logGroupName: `aws-waf-logs-payroll-${props.environment}-${props.stage}-api-${stackInstanceId()}`,
        production,
        removalPolicy,
        ...waf,
      });
    } else {
      Validations.of(this.api.deploymentStage).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason:
          'A sandbox deployed with -c waf=false: the stage throttle bounds total traffic and every token has its own rate limit; production refuses the switch and always has the web ACL.',
      });
    }
    const cloudWatchRole = this.api.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          'The AWS-maintained policy API Gateway documents for its account-level logging role; it only allows writing to CloudWatch Logs.',
      });
    }

    const alarms = new Alarms(this, 'Alarms', props.alarmTopic);
    alarms.notify(this.auditLog.failureAlarm);
    alarms.api(this.api.deploymentStage);
    alarms.functions([...Object.values(this.functions), this.auditLog.function]);

    // RestApi's own output ends in a slash; one URL output, in the form clients append /v1/… to, is enough.
    this.api.node.tryRemoveChild('Endpoint');
    this.apiUrl = Fn.join('', [
      'https://',
      this.api.restApiId,
      '.execute-api.',
      Aws.REGION,
      '.',
      Aws.URL_SUFFIX,
      '/',
      this.api.deploymentStage.stageName,
    ]);
    new CfnOutput(this, 'ApiUrl', { value: this.apiUrl, description: 'Base URL: clients call <ApiUrl>/v1/…' });
    new CfnOutput(this, 'RestApiId', { value: this.api.restApiId });
    new CfnOutput(this, 'AccessLogGroupName', { value: accessLogs.logGroupName });
    // For the audit failure runbook (docs/deploy.md): replay a parked batch into the ingest function.
    new CfnOutput(this, 'AuditIngestFunctionName', { value: this.auditLog.function.function.functionName });
    new CfnOutput(this, 'AuditFailuresQueueUrl', { value: this.auditLog.failures.queueUrl });
  }

  private baseEnvironment(): Record<string, string> {
    return baseEnvironment(this.props.environment, this.props.stage);
  }

  /** The functions that answer HTTP also stamp the CORS origin on every answer. */
  private httpEnvironment(): Record<string, string> {
    return { ...this.baseEnvironment(), PAYROLL_CORS_ALLOW_ORIGIN: this.corsOrigin };
  }

  private apiFunction(name: FunctionName, routes: readonly RouteDef[], removalPolicy: RemovalPolicy): PayrollFunction {
    const fn = new PayrollFunction(this, `${pascal(name)}Function`, {
      handler: apiHandlerOf(name),
      // Under one prefix, so the audit log ingestion takes subscriptions from these log groups alone (the docs
      // function's lines are no audit lines).
      logGroupName: name === 'docs' ? undefined : `${this.routeLogGroupPrefix}${pascal(name)}`,
      description:
        name === 'docs'
          ? 'The API reference and OpenAPI document; unknown path (404) or method (405); CORS preflights'
          : `${routes.map((r) => r.method).join(' ')}: ${[...new Set(routes.map((r) => r.path))].join(', ')}`.slice(
              0,
              256,
            ),
      environment: this.httpEnvironment(),
      memorySize: name === 'docs' ? 256 : undefined,
      removalPolicy,
    });
    this.functions[name] = fn;
    for (const access of accessOf(routes)) grantAccess(fn, access, this.props);
    // The function's table access, declared once (shared/api/table-access.ts); the docs function has none: it
    // answers before any token is read.
    const access = TABLE_ACCESS[name];
    if (access) grantTable(fn, this.props, access);
    return fn;
  }

  /**
   * Errors API Gateway answers itself (throttling, oversized body, its own faults) in the service's envelope.
   * Gateway response templates do no VTL, so each type states its status literally; the DEFAULT_4XX/5XX
   * catch-alls only meet types not listed here.
   */
  private addGatewayResponses(): void {
    const responses: [
      string,
      ResponseType,
      number,
      string,
      string,
      Record<string, string>?,
      Record<string, number>?,
    ][] = [
      ['Default4xx', ResponseType.DEFAULT_4XX, 400, 'bad_request', 'Bad request'],
      ['Default5xx', ResponseType.DEFAULT_5XX, 500, 'internal_error', 'Internal server error'],
      // Only reachable if a path escapes the fallback's ANY and {proxy+} methods.
      ['MissingAuthenticationToken', ResponseType.MISSING_AUTHENTICATION_TOKEN, 404, 'not_found', 'Not found'],
      ['ResourceNotFound', ResponseType.RESOURCE_NOT_FOUND, 404, 'not_found', 'Not found'],
      ['AccessDenied', ResponseType.ACCESS_DENIED, 403, 'forbidden', 'Forbidden'],
      ['WafFiltered', ResponseType.WAF_FILTERED, 403, 'forbidden', 'Forbidden'],
      [
        'Unauthorized',
        ResponseType.UNAUTHORIZED,
        401,
        'unauthorized',
        'Unauthorized',
        { 'WWW-Authenticate': '\'Bearer realm="payroll"\'' },
      ],
      [
        'Throttled',
        ResponseType.THROTTLED,
        429,
        'rate_limited',
        'Too Many Requests',
        { 'Retry-After': "'1'" },
        { retry_after: 1 },
      ],
      [
        'QuotaExceeded',
        ResponseType.QUOTA_EXCEEDED,
        429,
        'rate_limited',
        'Too Many Requests',
        { 'Retry-After': "'60'" },
        { retry_after: 60 },
      ],
      ['RequestTooLarge', ResponseType.REQUEST_TOO_LARGE, 413, 'payload_too_large', 'Payload too large'],
      [
        'UnsupportedMediaType',
        ResponseType.UNSUPPORTED_MEDIA_TYPE,
        415,
        'unsupported_media_type',
        'Unsupported media type',
      ],
      ['BadRequestBody', ResponseType.BAD_REQUEST_BODY, 400, 'invalid_request_body', 'Invalid request body'],
      [
        'BadRequestParameters',
        ResponseType.BAD_REQUEST_PARAMETERS,
        400,
        'invalid_request_body',
        'Invalid request parameters',
      ],
      ['IntegrationFailure', ResponseType.INTEGRATION_FAILURE, 502, 'internal_error', 'Internal server error'],
      ['IntegrationTimeout', ResponseType.INTEGRATION_TIMEOUT, 504, 'gateway_timeout', 'The request timed out'],
    ];
    for (const [id, type, status, code, message, headers, extra] of responses) {
      this.api.addGatewayResponse(id, {
        type,
        statusCode: String(status),
        responseHeaders: {
          'X-Request-Id': 'context.requestId',
          'Content-Type': "'application/json; charset=utf-8'",
          'Cache-Control': "'no-store'",
          'Access-Control-Allow-Origin': `'${this.corsOrigin}'`,
          ...headers,
        },
        templates: {
          'application/json': JSON.stringify({
            status,
            error: { code, message, details: [], ...extra },
            request_id: '$context.requestId',
          }),
        },
      });
    }
  }
}
