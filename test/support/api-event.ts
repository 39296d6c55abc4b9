import { randomUUID } from 'node:crypto';
import { routeMatcher } from '../../shared/api/routes.js';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

/** A REST API proxy event as API Gateway sends it, for invoking handlers directly. */
export function apiEvent(input: {
  method: string;
  path: string;
  resource?: string;
  headers?: Record<string, string>;
  body?: unknown;
  query?: Record<string, string>;
  params?: Record<string, string>;
}): APIGatewayProxyEvent {
  const requestId = randomUUID();
  // As API Gateway sets it: the template of the route the method and path match (`/v1/employees/{id}`).
  const resource = input.resource ?? routeMatcher.find(input.method, input.path)?.route.path ?? input.path;
  return {
    resource,
    path: input.path,
    httpMethod: input.method,
    headers: input.headers ?? {},
    multiValueHeaders: {},
    queryStringParameters: input.query ?? null,
    multiValueQueryStringParameters: null,
    pathParameters: input.params ?? null,
    stageVariables: null,
    body: input.body === undefined ? null : typeof input.body === 'string' ? input.body : JSON.stringify(input.body),
    isBase64Encoded: false,
    requestContext: {
      requestId,
      resourcePath: resource,
      httpMethod: input.method,
      path: input.path,
      stage: 'test',
    } as APIGatewayProxyEvent['requestContext'],
  };
}

export const lambdaContext = { awsRequestId: 'test', getRemainingTimeInMillis: () => 29_000 } as unknown as Context;

export interface Parsed {
  statusCode: number;
  headers: Record<string, string>;
  body: any;
}

export function parse(result: APIGatewayProxyResult): Parsed {
  return {
    statusCode: result.statusCode,
    headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k, String(v)])),
    body: result.body ? JSON.parse(result.body) : null,
  };
}
