import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import type { OpenApiDocument } from './document.js';

/**
 * Where `npm run openapi` writes the client types: in this build-time folder (openapi/generated/), not under test/
 * and not under shared/ (the Lambda source), because only the end-to-end tests' typed client (openapi-fetch,
 * test/support/typed-client.ts) and the dashboard (dashboard/src/types.ts) read them.
 */
export const CLIENT_TYPES_PATH = 'openapi/generated/api-types.ts';

/** TypeScript types of every path, operation and schema of the document (openapi-typescript). */
export async function clientTypes(doc: OpenApiDocument): Promise<string> {
  const ast = await openapiTS(doc as Parameters<typeof openapiTS>[0], { alphabetize: false, exportType: true });
  return `${COMMENT_HEADER.replace('openapi-typescript.', 'openapi-typescript from docs/openapi.json: `npm run openapi`.')}${astToString(ast)}`;
}
