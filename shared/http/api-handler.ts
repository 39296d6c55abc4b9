import middy from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import type { z } from 'zod';
import type { Endpoint, RouteDef } from '../api/route.js';
import { InvalidQueryError, InvalidRequestError } from '../domain/errors.js';
import { problemsFromZod } from '../schemas/problems.js';
import { renderSuccess, type ApiResult } from './envelope.js';
import { routeNotFound } from './fallback.js';
import type { Gate } from './gate.js';
import { authenticate, authorize, httpsOnly } from './middleware/authenticate.js';
import { errorEnvelope } from './middleware/error-envelope.js';
import { jsonBody } from './middleware/json-body.js';
import { rateLimitCheck, rateLimitHeaders } from './middleware/rate-limit.js';
import { headerOf, requestContext, requestIdOf, type ApiEvent } from './middleware/request-context.js';
import type { Principal } from './principal.js';

type Out<S> = S extends z.ZodType<infer T> ? T : Record<string, string>;
type BodyOf<R extends RouteDef> = R['body'] extends { text: object }
  ? Record<string, unknown> | string
  : R['body'] extends { validatedBy: 'use-case' }
    ? Record<string, unknown>
    : R['body'] extends { schema: z.ZodType<infer T>; required: false }
      ? T | undefined
      : R['body'] extends { schema: z.ZodType<infer T> }
        ? T
        : undefined;

/** What a use case is called with: the caller and the request, validated against the route's declaration. */
export interface ApiRequest<R extends RouteDef> {
  principal: Principal;
  body: BodyOf<R>;
  query: Out<R['query']>;
  params: Out<R['params']>;
  requestId: string;
  header(name: string): string | undefined;
  event: ApiEvent;
}

export type RouteHandler<R extends RouteDef> = (req: ApiRequest<R>) => Promise<ApiResult>;

function parse(schema: z.ZodType, value: unknown, Problem: typeof InvalidRequestError): unknown {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Problem(problemsFromZod(parsed.error, value));
  return parsed.data;
}

/** Validates the request against the route's declared schemas: every problem of a part at once, in `details`. */
function validated(route: RouteDef, event: ApiEvent) {
  const declared = route.body;
  let body: unknown;
  if (declared?.text && event.textBody !== undefined) {
    body = event.textBody;
  } else if (declared && event.jsonBody === undefined) {
    if (declared.required !== false || declared.validatedBy)
      throw new InvalidRequestError([{ code: 'required', message: 'A JSON object body is required' }]);
  } else if (declared) {
    body = declared.validatedBy ? event.jsonBody : parse(declared.schema, event.jsonBody, InvalidRequestError);
  }
  const rawQuery = event.queryStringParameters ?? {};
  const query = route.query ? parse(route.query, rawQuery, InvalidQueryError) : rawQuery;
  const rawParams = event.pathParameters ?? {};
  const params = route.params ? parse(route.params, rawParams, InvalidQueryError) : rawParams;
  if (route.headers) {
    const named = Object.fromEntries(
      Object.keys(route.headers.shape).map((name) => [name, headerOf(event, name)] as const),
    );
    parse(route.headers, named, InvalidRequestError);
  }
  return { body, query, params };
}

/**
 * One route's Lambda handler: middleware first (request context, error envelope, HTTPS and auth, rate limit,
 * scope, JSON body), then validation against the route's declaration, then the use case.
 */
export function apiRoute<R extends RouteDef>(route: R, gate: Gate | undefined, fn: RouteHandler<R>) {
  // before: in this order; after/onError: in reverse, so headers are stamped on the envelope's response.
  const chain = middy<ApiEvent, APIGatewayProxyResult>()
    .use(requestContext())
    .use(rateLimitHeaders())
    .use(errorEnvelope())
    .use(httpsOnly());
  if (route.scope !== null) {
    if (!gate) throw new Error(`Route ${route.id} needs a token: build its function a gate`);
    chain.use(authenticate(gate));
    if (route.bucket) chain.use(rateLimitCheck(route.bucket, gate));
    chain.use(authorize(route.scope));
  }
  return chain.use(jsonBody({ text: route.body?.text !== undefined })).handler(async (event) => {
    const requestId = requestIdOf(event);
    const result = await fn({
      principal: event.principal!,
      ...(validated(route, event) as Pick<ApiRequest<R>, 'body' | 'query' | 'params'>),
      requestId,
      header: (name) => headerOf(event, name),
      event,
    });
    return renderSuccess(result, requestId);
  });
}

/**
 * A function's handler. API Gateway has already routed the request: it sends a function only the methods declared
 * for it, with `resource` set to the path template it matched (`/v1/employees/{id}`) and `pathParameters` decoded,
 * so the function looks that route up by method and template rather than matching the path a second time (a path
 * that a custom domain's base path mapping would prefix). Anything else (the ANY methods the docs function answers,
 * an event invoked by hand) gets the 404/405 answer of `fallbackRoutes`.
 */
export function apiRouter<const Rs extends Record<string, RouteDef>>(
  declared: Rs,
  handlers: { [K in keyof Rs]: RouteHandler<Rs[K]> },
  options: { gate?: Gate; fallbackRoutes?: readonly Endpoint[] | (() => readonly Endpoint[]) } = {},
) {
  const notFound = routeNotFound(options.fallbackRoutes ?? Object.values(declared));
  const byTemplate = new Map(
    Object.entries(declared).map(([id, route]) => [
      `${route.method} ${route.path}`,
      apiRoute(route, options.gate, handlers[id as keyof Rs] as RouteHandler<RouteDef>),
    ]),
  );
  const handler = (event: ApiEvent, context: Context): Promise<APIGatewayProxyResult> =>
    (byTemplate.get(`${event.httpMethod} ${event.resource}`) ?? notFound)(event, context);
  // The routes it serves, for the test that checks each function serves exactly the routes declared for it.
  return Object.assign(handler, { routes: Object.values(declared) as readonly RouteDef[] });
}
