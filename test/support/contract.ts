import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { routeMatcher } from '../../shared/api/routes.js';

/**
 * Checks every answer the end-to-end tests receive against docs/openapi.json: the status must be documented
 * for the operation (found by method and path template through the route table), the media type too, a JSON
 * body must match the response schema (ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1), and every header
 * the document marks `required` must be present. A mismatch throws, so the test that made the request fails.
 */

interface HeaderObject {
  required?: boolean;
  schema?: { type?: string };
  $ref?: string;
}
interface MediaObject {
  schema?: unknown;
}
interface ResponseObject {
  $ref?: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaObject>;
}
interface Document {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { responses?: Record<string, ResponseObject>; headers?: Record<string, HeaderObject> };
}

const DOCUMENT_URL = new URL('../../docs/openapi.json', import.meta.url);
const DOCUMENT_ID = 'urn:payroll-api:openapi';

let loaded: { doc: Document; ajv: Ajv2020 } | undefined;
function load() {
  if (loaded) return loaded;
  const doc = JSON.parse(readFileSync(DOCUMENT_URL, 'utf8')) as Document;
  // The whole document is one schema resource, so `#/components/schemas/…` references resolve inside it.
  // Not strict: OpenAPI adds keywords (example) and the document's other members are not schema keywords.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: DOCUMENT_ID });
  loaded = { doc, ajv };
  return loaded;
}

/** A URI fragment's JSON pointer: each part escaped (RFC 6901), then percent-encoded (`{id}` in paths). */
const pointer = (parts: string[]) =>
  parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
const validators = new Map<string, ValidateFunction>();
function validatorAt(ajv: Ajv2020, parts: string[]): ValidateFunction {
  const ref = `${DOCUMENT_ID}#/${pointer(parts)}`;
  let v = validators.get(ref);
  if (!v) {
    v = ajv.compile({ $ref: ref });
    validators.set(ref, v);
  }
  return v;
}

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

export interface ObservedResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: unknown;
}

const describeErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? [])
    .slice(0, 10)
    .map((e) => `  ${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
    .join('\n');

/** Throws a ContractViolation when the answer to `method path` is not what docs/openapi.json documents. */
export function checkContract(method: string, requestPath: string, res: ObservedResponse): void {
  const { doc, ajv } = load();
  const where = `${method} ${requestPath} → ${res.status}`;
  const fail = (problem: string): never => {
    throw new ContractViolation(`Contract violation: ${where}: ${problem}\nbody: ${res.text.slice(0, 600)}`);
  };
  const pathname = requestPath.split('?')[0]!;
  const matches = routeMatcher.matches(pathname);
  const route = matches.find((m) => m.route.method === method.toUpperCase())?.route;

  // An unknown path or another method: the generic answers, with no operation of their own.
  let responsePath: string[];
  let response: ResponseObject | undefined;
  if (!route) {
    // A CORS preflight (shared/http/cors.ts, when the API allows another origin) is HTTP plumbing, not an operation.
    if (method.toUpperCase() === 'OPTIONS' && matches.length > 0 && res.status === 204) return;
    const name = matches.length === 0 ? 'NotFound' : 'MethodNotAllowed';
    const expected = matches.length === 0 ? 404 : 405;
    // The plain-HTTP refusal and body-size limits answer before routing; anything else must be the generic answer.
    if (res.status !== expected && ![403, 413].includes(res.status))
      fail(`expected ${expected} for an unrouted request`);
    if (res.status !== expected) return;
    responsePath = ['components', 'responses', name];
    response = doc.components.responses?.[name];
  } else {
    const operation = doc.paths[route.path]?.[method.toLowerCase()];
    if (!operation) fail(`route ${route.id} (${route.method} ${route.path}) is not in the document`);
    response = operation!.responses[String(res.status)];
    if (!response)
      fail(
        `status ${res.status} is not documented for ${route.id} (documented: ${Object.keys(operation!.responses).join(', ')})`,
      );
    responsePath = ['paths', route.path, method.toLowerCase(), 'responses', String(res.status)];
    // A shared answer (components/responses/Unauthorized …).
    if (response!.$ref) {
      const name = response!.$ref.split('/').pop()!;
      response = doc.components.responses?.[name];
      responsePath = ['components', 'responses', name];
    }
  }

  for (const [name, header] of Object.entries(response!.headers ?? {})) {
    const h = header.$ref ? (doc.components.headers?.[header.$ref.split('/').pop()!] ?? header) : header;
    const value = res.headers[name.toLowerCase()];
    if (h.required && value === undefined)
      fail(`required header ${name} is missing (headers: ${Object.keys(res.headers).join(', ')})`);
    if (value !== undefined && h.schema?.type === 'integer' && !/^-?\d+$/.test(value))
      fail(`header ${name}: "${value}" is not an integer`);
  }

  const contentType = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const content = response!.content ?? {};
  if (Object.keys(content).length === 0) {
    if (res.text !== '') fail('a body where the document has none');
    return;
  }
  if (!(contentType in content))
    fail(`Content-Type "${contentType}" is not documented (documented: ${Object.keys(content).join(', ')})`);
  // Only JSON bodies are checked against a schema; a PDF, a NACHA file, HTML or a script only by media type.
  if (contentType !== 'application/json' || content[contentType]!.schema === undefined) return;
  const validate = validatorAt(ajv, [...responsePath, 'content', contentType, 'schema']);
  if (!validate(res.body)) fail(`the body does not match the schema:\n${describeErrors(validate.errors)}`);
}

/**
 * What a documentation sample claims to be, checked against docs/openapi.json: a component schema by name, or an
 * operation's request body or response body. Returns the problems found (none: the sample is what it says).
 */
export function checkSample(claim: string, value: unknown): string[] {
  const { doc, ajv } = load();
  const operation = /^(GET|POST|PATCH|PUT|DELETE) (\S+) (request|\d{3})$/.exec(claim);
  let parts: string[];
  if (!operation) {
    const schemas = (doc.components as { schemas?: Record<string, unknown> }).schemas ?? {};
    if (!(claim in schemas)) return [`no component schema named ${claim}`];
    parts = ['components', 'schemas', claim];
  } else {
    const [, method, path, what] = operation as unknown as [string, string, string, string];
    const op = doc.paths[path]?.[method.toLowerCase()] as
      | { requestBody?: { content?: Record<string, MediaObject> }; responses: Record<string, ResponseObject> }
      | undefined;
    if (!op) return [`no operation ${method} ${path} in the document`];
    if (what === 'request') {
      if (!op.requestBody?.content?.['application/json']?.schema) return [`${method} ${path} takes no JSON body`];
      parts = ['paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'];
    } else {
      const response = op.responses[what];
      if (!response) return [`${method} ${path} documents no ${what}`];
      const ref = response.$ref?.split('/').slice(1);
      const base = ref ?? ['paths', path, method.toLowerCase(), 'responses', what];
      const resolved = ref ? doc.components.responses?.[ref[2]!] : response;
      if (!resolved?.content?.['application/json']?.schema) return [`${method} ${path} ${what} has no JSON body`];
      parts = [...base, 'content', 'application/json', 'schema'];
    }
  }
  const validate = validatorAt(ajv, parts);
  return validate(value) ? [] : describeErrors(validate.errors).split('\n');
}
