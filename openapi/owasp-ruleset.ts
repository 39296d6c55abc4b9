import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import spectralCore, { type RulesetDefinition } from '@stoplight/spectral-core';
import owasp from '@stoplight/spectral-owasp-ruleset';
import ParsersModule from '@stoplight/spectral-parsers';

/**
 * The OWASP API Security ruleset (Spectral, recommended rules) as this API is checked with: `npm run lint:api`
 * (scripts/lint-api.ts) and test/unit/openapi-owasp.test.ts run it on docs/openapi.json and expect no finding.
 *
 * The document declares the bounds the service enforces (openapi/, shared/api, shared/schemas), so almost every
 * rule applies as it is. Where a rule is right in general but not for a few places, it is turned off for those
 * places only (`overrides`, by JSON pointer), each with its reason; one rule is narrowed by the one name it
 * mistakes for a credential. No rule is turned off wholesale.
 */

/** The document, relative to this file: overrides name places in it. */
const DOCUMENT = '../docs/openapi.json';

/** A path into the document as the URI fragment of its JSON pointer, the form Spectral matches overrides with. */
export const pointerOf = (path: readonly (string | number)[]) =>
  `#/${path.map((p) => encodeURIComponent(String(p).replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;

/** A place in the document, as an override names it. */
const at = (...path: string[]) => `${DOCUMENT}${pointerOf(path)}`;

type RuleObject = Record<string, unknown> & { then: { functionOptions?: object }[] };
/**
 * The ruleset object: the package's ESM build default-exports it; its CommonJS build (and TypeScript, which reads
 * the package as CommonJS) puts it under `default`.
 */
const OWASP = ((owasp as { default?: unknown }).default ?? owasp) as RulesetDefinition;
const OWASP_RULES = (OWASP as unknown as { rules: Record<string, RuleObject> }).rules;

const NO_CREDENTIALS_IN_URL = 'owasp:api2:2023-no-credentials-in-url';
const credentials = OWASP_RULES[NO_CREDENTIALS_IN_URL]!;

/** The operations anyone may call: the API's own reference and its index. */
const PUBLIC_OPERATIONS = ['/v1', '/v1/openapi.json', '/docs', '/docs/reference.js'].map((path) => at('paths', path));

export const owaspRuleset: RulesetDefinition = {
  extends: [[OWASP, 'recommended']],
  rules: {
    /**
     * The rule matches parameter names against `token`, `secret`, `password`, `api-key` …, and so reads the lists'
     * `page_token` as a credential. It is not one: an opaque cursor, signed over the organization and the query
     * (shared/adapters/page-token.ts), that lets nobody in; the bearer token travels in the Authorization header
     * only. The rule stays on for every other name.
     */
    [NO_CREDENTIALS_IN_URL]: {
      ...credentials,
      // biome-ignore lint/suspicious/noThenProperty: a Spectral rule's action is named `then`; the rule is no promise.
      then: credentials.then.map((then) => ({
        ...then,
        functionOptions: {
          notMatch:
            '/^(?!page_token$).*(client_?secret|token|access_?token|refresh_?token|id_?token|password|secret|api-?key).*$/i',
        },
      })),
    } as never,
  },
  overrides: [
    {
      /**
       * The API's reference (the OpenAPI document, the Redoc page and its script) is public by design: no token
       * (shared/api/docs.ts declares no scope), so never a 401. Without a key there is no per-key rate limit either:
       * only API Gateway's stage-wide throttle applies, whose 429 carries `Retry-After` (documented) and no
       * rate-limit headers.
       */
      files: PUBLIC_OPERATIONS,
      rules: {
        'owasp:api2:2023-read-restricted': 'off',
        'owasp:api8:2023-define-error-responses-401': 'off',
        'owasp:api4:2023-rate-limit': 'off',
      },
    },
    {
      /** The Redoc page and its script are files served as they are (HTML, JavaScript), not values with a shape. */
      files: [
        at('paths', '/docs', 'get', 'responses', '200', 'content', 'text/html', 'schema'),
        at('paths', '/docs/reference.js', 'get', 'responses', '200', 'content', 'text/javascript', 'schema'),
      ],
      rules: { 'owasp:api4:2023-string-limit': 'off', 'owasp:api4:2023-string-restricted': 'off' },
    },
    {
      /** A paystub's PDF is binary (`format: binary`): a length in characters says nothing of it. */
      files: [at('paths', '/v1/paystubs/{id}', 'get', 'responses', '200', 'content', 'application/pdf', 'schema')],
      rules: { 'owasp:api4:2023-string-limit': 'off' },
    },
    {
      /**
       * A 401 is answered before the rate limit is counted (authentication comes first: shared/http/api-handler.ts),
       * so the shared 401 answer has no rate-limit headers to declare.
       */
      files: [at('components', 'responses', 'Unauthorized')],
      rules: { 'owasp:api4:2023-rate-limit': 'off' },
    },
    {
      /**
       * A bank's NACHA return file as the bank sent it: read record by record, each bad line a problem of the 400
       * (shared/adapters/nacha-returns.ts). Its size is bounded (`maxLength`, the body limit); no pattern describes
       * what a bank may send.
       */
      files: [at('paths', '/v1/disbursement-returns', 'post', 'requestBody', 'content', 'text/plain', 'schema')],
      rules: { 'owasp:api4:2023-string-restricted': 'off' },
    },
    {
      /**
       * A problem's message may quote what the request carried as it came: an employee id that names nobody
       * (shared/use-cases/submit-payroll.ts), a code from a line of a bank's file. Neither a pattern nor a length is
       * true of it.
       */
      files: [at('components', 'schemas', 'ProblemDetail', 'properties', 'message')],
      rules: { 'owasp:api4:2023-string-limit': 'off', 'owasp:api4:2023-string-restricted': 'off' },
    },
    {
      /** An audit line's user agent is whatever the client sent (bounded, redacted): no pattern is true of it. */
      files: [at('components', 'schemas', 'AuditLogLine', 'properties', 'user_agent')],
      rules: { 'owasp:api4:2023-string-restricted': 'off' },
    },
    {
      /**
       * A delivery keeps every attempt, and each redelivery of its event (at most one a minute) adds to them
       * (shared/data/event-repository.ts): the service sets no maximum to declare.
       */
      files: [at('components', 'schemas', 'Event', 'properties', 'deliveries', 'items', 'properties', 'attempts')],
      rules: { 'owasp:api4:2023-array-limit': 'off' },
    },
  ],
};

/** This file: overrides are resolved relative to it. */
export const OWASP_RULESET_SOURCE = fileURLToPath(import.meta.url);

/** The committed document the ruleset checks. */
export const OPENAPI_DOCUMENT_PATH = fileURLToPath(new URL(DOCUMENT, import.meta.url));

// Both packages are CommonJS: their exports are the default import's members (parsers: under `default` in some
// loaders).
const { Document, Ruleset, Spectral } = spectralCore as unknown as typeof import('@stoplight/spectral-core');
const Parsers = (
  (ParsersModule as { Json?: unknown }).Json
    ? ParsersModule
    : ((ParsersModule as { default?: unknown }).default ?? ParsersModule)
) as typeof import('@stoplight/spectral-parsers');

export interface OwaspFinding {
  code: string;
  /** Where, as a dotted path into the document (`paths./v1/employees.get.responses.200`). */
  path: string;
  /** The same place as a JSON pointer fragment (`#/paths/~1v1~1employees/get/responses/200`). */
  pointer: string;
  message: string;
  severity: number;
}

/**
 * Runs a ruleset (this one unless told) on a document (docs/openapi.json unless told): every finding, in document
 * order. `source` is where the text is said to come from; the overrides apply to docs/openapi.json only.
 */
export async function lintOpenApi(
  options: { text?: string; source?: string; ruleset?: RulesetDefinition } = {},
): Promise<OwaspFinding[]> {
  const source = options.source ?? OPENAPI_DOCUMENT_PATH;
  const spectral = new Spectral();
  // Its overrides name places in the document relative to this file, so the ruleset is given its location.
  spectral.setRuleset(
    new Ruleset(options.ruleset ?? owaspRuleset, { severity: 'recommended', source: OWASP_RULESET_SOURCE }),
  );
  const document = new Document(options.text ?? readFileSync(source, 'utf8'), Parsers.Json, source);
  const results = await spectral.run(document);
  return results.map((r) => ({
    code: String(r.code),
    path: r.path.join('.'),
    pointer: pointerOf(r.path),
    message: r.message,
    severity: r.severity,
  }));
}

/** One line per finding: `code  path  message`. */
export const formatFindings = (findings: readonly OwaspFinding[]) =>
  findings.map((f) => `${f.code}  ${f.path}  ${f.message}`).join('\n');
