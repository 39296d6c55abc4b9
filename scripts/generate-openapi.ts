import { writeFileSync } from 'node:fs';
import { CLIENT_TYPES_PATH, clientTypes } from '../openapi/client-types.js';
import { buildOpenApiDocument, serializeOpenApi } from '../openapi/document.js';

/**
 * `npm run openapi`: writes docs/openapi.json from the route table and the zod schemas, and the client types
 * generated from it (openapi/generated/api-types.ts: the end-to-end tests' typed client and the dashboard use
 * them). Commit both; test/unit/openapi.test.ts fails while either differs from what this writes.
 */
const root = new URL('../', import.meta.url);
const doc = buildOpenApiDocument();
const text = serializeOpenApi(doc);
writeFileSync(new URL('docs/openapi.json', root), text);
writeFileSync(new URL(CLIENT_TYPES_PATH, root), await clientTypes(doc));
console.log(`Wrote docs/openapi.json (${Buffer.byteLength(text)} bytes) and ${CLIENT_TYPES_PATH}`);
