import { createHash } from 'node:crypto';

/**
 * The API reference page: Redoc's standalone bundle (the `redoc` npm package, served by the API itself at
 * /docs/reference.js, no CDN) renders the OpenAPI document, which the page carries inline so it needs no second
 * request.
 */

/** JSON text with `<` escaped, so the document cannot close the script element it sits in. */
const inlineJson = (json: string) => json.replace(/</g, '\\u003c');

const INIT = `Redoc.init(JSON.parse(document.getElementById('openapi-document').textContent), { expandResponses: '200,201,202', jsonSampleExpandLevel: 3 }, document.getElementById('reference'));`;

/**
 * Only the page's own script, its one inline statement (by hash) and the styles Redoc injects run; nothing is
 * fetched from elsewhere (Redoc's footer logo, on a CDN, is not loaded and hides itself).
 */
export const REFERENCE_PAGE_CSP = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${createHash('sha256').update(INIT).digest('base64')}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The page. The script's URL is relative, so the page works at `/docs` locally and at `/<stage>/docs` deployed
 * (API Gateway's path has no stage): from `/docs` it is `docs/reference.js`, from `/docs/` `reference.js`.
 */
export function referencePage(documentJson: string, requestPath: string): string {
  const script = requestPath.endsWith('/') ? 'reference.js' : 'docs/reference.js';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payroll API reference</title>
</head>
<body style="margin: 0">
<div id="reference"></div>
<script id="openapi-document" type="application/json">${inlineJson(documentJson)}</script>
<script src="${script}"></script>
<script>${INIT}</script>
</body>
</html>
`;
}
