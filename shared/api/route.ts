import type { z } from 'zod';
import type { Scope } from '../domain/scopes.js';

export const HTTP_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
export type RateBucket = 'read' | 'payroll_write' | 'employee_write';

/**
 * The Lambda function that serves a route: one per resource (functions/api/<name>.ts), each the composition root
 * of what its routes use, and each with one role holding the union of its routes' `access`.
 */
export type FunctionName =
  | 'employees'
  | 'payroll'
  | 'disbursements'
  | 'returns'
  | 'paystubs'
  | 'webhooks'
  | 'admin'
  | 'bank-link-api'
  | 'docs';

/**
 * What a route's function may touch beyond the table reads and writes every authenticated route needs (token
 * lookup, last-used stamp, rate limit). The CDK stack grants its function exactly the union of these.
 */
export type Access =
  // Envelope encryption under the service key, confined to one kind of secret by its encryption context.
  | 'kms:encrypt:bank-account'
  | 'kms:decrypt:bank-account'
  | 'kms:encrypt:webhook-secret'
  | 'kms:decrypt:webhook-secret'
  // The per-file data keys that seal NACHA files, under the disbursement file key (its own KMS key).
  | 'kms:encrypt:disbursement-file'
  | 'kms:decrypt:disbursement-file'
  | 'secret:signing'
  | 'bucket:read'
  | 'bucket:write'
  | 'queue:payroll:send'
  | 'queue:webhooks:send';

/** The statuses an operation may answer beyond those derived from its route (auth, scope, rate limit, 500). */
export type DocumentedError = 400 | 403 | 404 | 409 | 410 | 413 | 422;

export interface SuccessResponse {
  status: 200 | 201 | 202;
  description: string;
  /** The `data` of the envelope, or the whole body when `raw`. */
  schema?: z.ZodType;
  /** The component name of the enveloped answer (`EmployeeResponse`). */
  envelope?: string;
  message?: string;
  example: unknown;
  /** Other representations of the same answer (a PDF, a NACHA file), chosen with `Accept`. */
  alternatives?: Record<
    string,
    {
      description: string;
      schema?: { type: 'string'; format?: string; maxLength?: number; pattern?: string };
      example?: string;
      /**
       * A further scope this representation needs beyond the route's (a NACHA file's text holds full account
       * numbers); `default`: it is what a request gets unless its `Accept` asks for JSON.
       */
      scope?: { scope: Scope; default: boolean };
    }
  >;
  /** `Location` of the created resource. */
  location?: boolean;
  /** Extra response headers, by name: description and whether it is always sent. */
  headers?: Record<string, { description: string; required: boolean }>;
  /** A body that is not the JSON envelope: its media type. */
  raw?: string;
}

export interface RequestBody {
  schema: z.ZodType;
  example: unknown;
  /** @default true; false: a request without a body is accepted and the use case gets `undefined`. */
  required?: boolean;
  /**
   * 'use-case': the handler only checks that the body is a JSON object and the use case validates it with this
   * schema, adding the problems only stored data reveals (configured values, unknown employees, a taken pay
   * window), so one answer lists every problem.
   */
  validatedBy?: 'use-case';
  description?: string;
  examples?: Record<string, { summary: string; value: unknown }>;
  /**
   * Also accepted as `Content-Type: text/plain` (a bank's file): the handler then gets the text as `body`, and the
   * use case reads it.
   */
  text?: { description: string; example: string };
}

/**
 * One route, declared once: routing, access control, rate limit, the grants of its function, the zod schemas of
 * its request and answers, and their documentation. Request validation (shared/http/api-handler.ts), the OpenAPI
 * document (openapi/), the CDK API and its grants (infra/), the local server (local/), the authorization matrix
 * and the fuzzer (test/) all read it.
 */
export interface RouteDef {
  /** Stable name: the CDK method's operation name and the OpenAPI operationId. */
  readonly id: string;
  readonly function: FunctionName;
  readonly method: HttpMethod;
  /** API Gateway style path, `{name}` for a parameter. */
  readonly path: string;
  /** null: no token needed. */
  readonly scope: Scope | null;
  readonly bucket: RateBucket | null;
  readonly summary: string;
  readonly access: readonly Access[];
  /** Files (paths from the repository root) the handler reads at run time: deployed, copied beside the bundle. */
  readonly files?: readonly string[];
  readonly tag: string;
  readonly description: string;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly headers?: z.ZodObject;
  readonly body?: RequestBody;
  readonly success: readonly SuccessResponse[];
  /** When each documented error happens on this route (the codes are in the status's error schema). */
  readonly errors?: Partial<Record<DocumentedError, string>>;
}

type Declared = Omit<RouteDef, 'id' | 'function'>;

/** A resource's routes, by id: stamps each with its id and the function that serves it. */
export function routes<const R extends Record<string, Declared>>(
  fn: FunctionName,
  declared: R,
): { [K in keyof R]: R[K] & { id: K; function: FunctionName } } {
  return Object.fromEntries(Object.entries(declared).map(([id, r]) => [id, { ...r, id, function: fn }])) as never;
}

/** Where a route is served: all that matching a request needs. */
export type Endpoint = Pick<RouteDef, 'method' | 'path'>;

export interface RouteMatch<R extends Endpoint = RouteDef> {
  route: R;
  /** Decoded, as API Gateway gives them. */
  params: Record<string, string>;
}

/**
 * Matches request paths against the templates of `routes` as API Gateway does: `{name}` is one segment, a trailing
 * slash is allowed, a parameter that does not decode matches nothing. Compiled on first use, when `routes` is a
 * function it is called then.
 */
export function pathMatcher<R extends Endpoint>(routes: readonly R[] | (() => readonly R[])) {
  let compiled: { route: R; regex: RegExp; names: string[] }[] | undefined;
  const matches = (path: string): RouteMatch<R>[] => {
    compiled ??= (typeof routes === 'function' ? routes() : routes).map((route) => {
      const names: string[] = [];
      // `{name}` is one segment; everything else is literal (`.` in `/v1/openapi.json` matches only a dot).
      const pattern = route.path
        .split(/(\{\w+\})/)
        .map((part) => {
          const name = /^\{(\w+)\}$/.exec(part)?.[1];
          if (name === undefined) return part.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
          names.push(name);
          return '([^/]+)';
        })
        .join('');
      return { route, names, regex: new RegExp(`^${pattern}/?$`) };
    });
    const out: RouteMatch<R>[] = [];
    for (const c of compiled) {
      const m = c.regex.exec(path);
      if (!m) continue;
      try {
        out.push({
          route: c.route,
          params: Object.fromEntries(c.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])),
        });
      } catch {
        // An undecodable parameter (`%E0%A4%A`) matches no route.
      }
    }
    return out;
  };
  return {
    /** Every route whose template matches, whatever its method. */
    matches,
    /** The route for this method and path, if one is declared. */
    find: (method: string, path: string) => matches(path).find((m) => m.route.method === method.toUpperCase()),
  };
}
