import { readFileSync } from 'node:fs';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../shared/api/routes.js';
import { CLIENT_TYPES_PATH, clientTypes } from '../../openapi/client-types.js';
import { buildOpenApiDocument, serializeOpenApi } from '../../openapi/document.js';

const FILE = new URL('../../docs/openapi.json', import.meta.url);
const committed = readFileSync(FILE, 'utf8');
const doc = buildOpenApiDocument();
const generated = serializeOpenApi(doc);

type Json = Record<string, any>;
/** A local `$ref` (`#/components/…`) resolved in the document; anything else as is. */
const resolve = (value: Json): Json =>
  typeof value.$ref === 'string'
    ? (value.$ref as string)
        .slice(2)
        .split('/')
        .reduce((node: Json, key) => node[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc as Json)
    : value;
const operations = (d: Json) =>
  Object.entries(d.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ path, method, op: op as Json })),
  );

describe('the OpenAPI document', () => {
  it('is committed as generated: run `npm run openapi` after changing a route or a schema', () => {
    // Not toEqual on the text: a stale file would print two 200 KB strings.
    expect(generated === committed, 'docs/openapi.json is stale: run `npm run openapi` and commit it').toBe(true);
  });

  it("has its client types committed as generated (the typed client of the end-to-end tests, the dashboard's types)", async () => {
    const committedTypes = readFileSync(new URL(`../../${CLIENT_TYPES_PATH}`, import.meta.url), 'utf8');
    expect((await clientTypes(doc)) === committedTypes, `${CLIENT_TYPES_PATH} is stale: run \`npm run openapi\``).toBe(
      true,
    );
  });

  it('is deterministic: a second generation is identical', () => {
    expect(serializeOpenApi(buildOpenApiDocument())).toBe(generated);
  });

  it('documents every route of the table, and nothing else', () => {
    const documented = operations(doc)
      .map((o) => `${o.method.toUpperCase()} ${o.path}`)
      .sort();
    expect(documented).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  it.each(ROUTES.map((r) => [r.id, r] as const))(
    '%s: operation id, security and the errors its scope and bucket imply',
    (_, route) => {
      const op = (doc.paths as Json)[route.path][route.method.toLowerCase()] as Json;
      expect(op.operationId).toBe(route.id);
      expect(op.summary).toBe(route.summary);
      const statuses = Object.keys(op.responses);
      expect(statuses).toContain('403');
      expect(statuses).toContain('500');
      if (route.scope) {
        expect(op.security).toEqual([{ bearerAuth: [route.scope] }]);
        expect(op['x-required-scope']).toBe(route.scope);
        expect(op['x-rate-limit-bucket']).toBe(route.bucket!.replace('_', '-'));
        expect(statuses).toEqual(expect.arrayContaining(['401', '429']));
        expect(resolve(resolve(op.responses['401']).headers['WWW-Authenticate']).required).toBe(true);
        expect(resolve(resolve(op.responses['429']).headers['Retry-After']).required).toBe(true);
      } else {
        expect(op.security).toEqual([]);
        expect(statuses).not.toContain('401');
      }
      for (const [status, ref] of Object.entries(op.responses as Json)) {
        const response = resolve(ref);
        const header = (name: string) => resolve(response.headers[name] ?? {});
        expect(header('X-Request-Id'), `${status} X-Request-Id`).toMatchObject({ required: true });
        const limited =
          route.bucket !== null && (status.startsWith('2') || ['400', '404', '409', '422', '429'].includes(status));
        if (limited)
          expect(header('X-RateLimit-Remaining'), `${status} X-RateLimit-Remaining`).toMatchObject({ required: true });
        if (status === '201') expect(header('Location')).toMatchObject({ required: true });
      }
    },
  );

  it('has an example for every request body and every success response, and each example fits its schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: 'urn:payroll-api:openapi' });
    const pointer = (parts: string[]) =>
      parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
    const check = (where: string, media: Json, at: string[]) => {
      expect(media.example, `${where}: example`).toBeDefined();
      if (!media.schema || media.schema.type === 'string') return;
      const validate = ajv.compile({ $ref: `urn:payroll-api:openapi#/${pointer([...at, 'schema'])}` });
      expect(validate(media.example), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
    };
    for (const { path, method, op } of operations(doc)) {
      if (op.requestBody)
        check(`${method} ${path} request`, op.requestBody.content['application/json'], [
          'paths',
          path,
          method,
          'requestBody',
          'content',
          'application/json',
        ]);
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const [type, media] of Object.entries((response.content ?? {}) as Json)) {
          if (type === 'application/pdf' || (!status.startsWith('2') && !(media as Json).example)) continue;
          check(`${method} ${path} ${status} ${type}`, media as Json, [
            'paths',
            path,
            method,
            'responses',
            status,
            'content',
            type,
          ]);
        }
      }
    }
  });

  it('passes the Redocly linter (recommended rules) with no error, and no warning but the intended ones', async () => {
    const config = await createConfig({
      extends: ['recommended'],
      rules: {
        // The local stack's https://localhost:8443 is a real server of this API.
        'no-server-example.com': 'off',
        // A private API: there is no license to state.
        'info-license': 'off',
      },
    });
    const problems = await lintFromString({ source: generated, absoluteRef: FILE.pathname, config });
    const found = (severity: string) =>
      problems
        .filter((p) => p.severity === severity)
        .map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(found('error')).toEqual([]);
    expect(found('warn').sort()).toEqual([
      // The generic answers to unrouted requests: referred to by no operation, on purpose.
      'no-unused-components: Component: "MethodNotAllowed" is never used. at #/components/responses/MethodNotAllowed',
      'no-unused-components: Component: "NotFound" is never used. at #/components/responses/NotFound',
      // PUT, PATCH and DELETE of a payroll exist to refuse: a submitted payroll is immutable.
      ...['delete', 'patch', 'put'].map(
        (m) =>
          `operation-2xx-response: Operation must have at least one \`2XX\` response. at #/paths/~1v1~1payroll~1{id}/${m}/responses`,
      ),
    ]);
  });
});
