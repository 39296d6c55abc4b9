import middy from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import type { z } from 'zod';
import { InvalidQueryError, InvalidRequestError } from '../domain/errors.js';
import { problemsFromZod } from '../schemas/problems.js';
import { renderSuccess, type ApiResult } from './envelope.js';
import { authenticate, authorize } from './middleware/authenticate.js';
import { errorEnvelope } from './middleware/error-envelope.js';
import { jsonBody } from './middleware/json-body.js';
import { rateLimitCheck, rateLimitHeaders } from './middleware/rate-limit.js';
import { requestContext, requestIdOf, type ApiEvent } from './middleware/request-context.js';
import type { Principal } from './principal.js';
import type { RouteDef } from './routes.js';

export interface ApiRequest<B, Q, P> {
  principal: Principal;
  body: B;
  query: Q;
  params: P;
  requestId: string;
  header(name: string): string | undefined;
  event: ApiEvent;
}

interface Schemas<B, Q, P> {
  /** 'raw': the body must be a JSON object but the use case validates it (it needs stored settings to). */
  body?: z.ZodType<B> | 'raw';
  /**
   * With a zod `body`: a request without a body (none, or an empty one) is accepted and the use case gets
   * `undefined`; a body that is there is validated as a required one is, with the same problems.
   */
  bodyOptional?: boolean;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
}

type Out<S, Fallback> = S extends z.ZodType<infer T> ? T : Fallback;
// biome-ignore lint/suspicious/noExplicitAny: a constraint over any schema triple; each use infers the real types
type BodyOf<S extends Schemas<any, any, any>> = S['body'] extends 'raw'
  ? Record<string, unknown>
  : S['bodyOptional'] extends true
    ? Out<S['body'], undefined> | undefined
    : Out<S['body'], undefined>;

/**
 * Builds a Lambda handler for one route: middleware first (request context, error envelope, HTTPS and auth,
 * JSON body), then zod validation of body, query and path, then the use case. Every problem of the body is
 * reported at once in `details`.
 */
// biome-ignore lint/suspicious/noExplicitAny: a constraint over any schema triple; each use infers the real types
export function apiHandler<S extends Schemas<any, any, any>>(
  route: RouteDef,
  schemas: S,
  fn: (
    req: ApiRequest<BodyOf<S>, Out<S['query'], Record<string, string>>, Out<S['params'], Record<string, string>>>,
  ) => Promise<ApiResult>,
) {
  const inner = async (event: ApiEvent, _context: Context): Promise<APIGatewayProxyResult> => {
    const requestId = requestIdOf(event);
    let body: unknown = event.jsonBody;
    if (schemas.body === undefined) {
      body = undefined;
    } else if (body === undefined) {
      if (!schemas.bodyOptional || schemas.body === 'raw')
        throw new InvalidRequestError([{ code: 'required', message: 'A JSON object body is required' }]);
    } else if (schemas.body !== 'raw') {
      const parsed = schemas.body.safeParse(body);
      if (!parsed.success) throw new InvalidRequestError(problemsFromZod(parsed.error, body));
      body = parsed.data;
    }
    const rawQuery = event.queryStringParameters ?? {};
    let query: unknown = rawQuery;
    if (schemas.query) {
      const parsed = schemas.query.safeParse(rawQuery);
      if (!parsed.success) throw new InvalidQueryError(problemsFromZod(parsed.error, rawQuery));
      query = parsed.data;
    }
    const rawParams = event.pathParameters ?? {};
    let params: unknown = rawParams;
    if (schemas.params) {
      const parsed = schemas.params.safeParse(rawParams);
      if (!parsed.success) throw new InvalidQueryError(problemsFromZod(parsed.error, rawParams));
      params = parsed.data;
    }
    const headers = event.headers ?? {};
    const result = await fn({
      principal: event.principal!,
      body: body as never,
      query: query as never,
      params: params as never,
      requestId,
      header: (name) => {
        const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
        return key === undefined ? undefined : (headers[key] ?? undefined);
      },
      event,
    });
    return renderSuccess(result, requestId);
  };

  return (
    middy<ApiEvent, APIGatewayProxyResult>()
      // before: in this order; after/onError: in reverse, so headers are stamped on the envelope's response.
      .use(requestContext())
      .use(rateLimitHeaders())
      .use(errorEnvelope())
      .use(authenticate(route))
      .use(rateLimitCheck(route))
      .use(authorize(route))
      .use(jsonBody())
      .handler(inner)
  );
}
