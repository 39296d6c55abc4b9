import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname } from 'node:path';
import { ASSET_CACHE_CONTROL, dashboardCsp, PAGE_CACHE_CONTROL } from '../infra/dashboard-headers.js';

/**
 * The developer dashboard on the local stack: GET /dashboard/… serves the static site, apart from the API's
 * routing. It is built in memory by esbuild on the first request (about 100 ms) and again whenever a source file
 * changes, so `npm start` pays nothing for it and an edited page shows on reload. Files are looked up in the
 * built set by name, never on disk, so no path can reach outside it.
 */
export const DASHBOARD_PATH = '/dashboard';

/**
 * The same policy the deployed site gets from CloudFront (infra/dashboard-stack.ts), but for the API being on this
 * origin too. Nothing inline, nothing from another origin.
 */
const LOCAL_DASHBOARD_CSP = dashboardCsp();

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

interface Built {
  files: Map<string, { body: Buffer; etag: string }>;
  sourceTime: number;
}

let current: Built | undefined;
let building: Promise<Built> | undefined;

async function site(checkSources: boolean): Promise<Built> {
  if (current && !checkSources) return current;
  // Loaded on first use: a stack nobody opens the dashboard of never starts esbuild.
  const { bundleDashboard, latestSourceChange } = await import('../dashboard/build.js');
  const sourceTime = latestSourceChange();
  if (current && current.sourceTime >= sourceTime) return current;
  building ??= bundleDashboard()
    .then((files) => {
      current = {
        sourceTime,
        files: new Map(
          files.map((f) => {
            const body = Buffer.from(f.contents);
            return [f.path, { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` }];
          }),
        ),
      };
      return current;
    })
    .finally(() => {
      building = undefined;
    });
  return building;
}

export function isDashboardRequest(req: IncomingMessage): boolean {
  const path = (req.url ?? '/').split('?')[0]!;
  return path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(text);
}

export async function serveDashboard(req: IncomingMessage, res: ServerResponse): Promise<void> {
  req.resume();
  try {
    const url = new URL(req.url ?? '/', 'https://localhost');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return plain(res, 405, 'Method not allowed\n', { Allow: 'GET, HEAD' });
    // Relative asset URLs need the trailing slash.
    if (url.pathname === DASHBOARD_PATH) return plain(res, 308, '', { Location: `${DASHBOARD_PATH}/${url.search}` });

    // The URL parser has already resolved dot segments (`/dashboard/%2e%2e/x` is `/x`): anything now outside is not ours.
    if (!url.pathname.startsWith(`${DASHBOARD_PATH}/`)) return plain(res, 404, 'Not found\n');
    let rest: string;
    try {
      rest = decodeURIComponent(url.pathname.slice(DASHBOARD_PATH.length + 1));
    } catch {
      return plain(res, 400, 'Bad request\n');
    }
    if (rest.includes('\0') || rest.includes('\\') || rest.split('/').some((s) => s === '..' || s === '.'))
      return plain(res, 404, 'Not found\n');

    // Hashed assets never change; index.html and config.json may, so only they trigger a rebuild check.
    const isAsset = rest.startsWith('assets/');
    let built: Built;
    try {
      built = await site(!isAsset);
    } catch (err) {
      process.stderr.write(`dashboard build failed: ${String(err)}\n`);
      return plain(res, 500, `The dashboard could not be built:\n${String(err)}\n`);
    }
    // Any path without an extension is a page of the app: index.html (the app routes by the URL's hash).
    const name = rest === '' || (!isAsset && extname(rest) === '' && !built.files.has(rest)) ? 'index.html' : rest;
    const file = built.files.get(name);
    if (!file) return plain(res, 404, 'Not found\n');

    const headers: Record<string, string> = {
      'Content-Type': CONTENT_TYPES[extname(name)] ?? 'application/octet-stream',
      'Cache-Control': isAsset ? ASSET_CACHE_CONTROL : PAGE_CACHE_CONTROL,
      ETag: file.etag,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Content-Security-Policy': LOCAL_DASHBOARD_CSP,
    };
    if (req.headers['if-none-match'] === file.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Length': String(file.body.length) });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  } catch (err) {
    process.stderr.write(`dashboard: ${String(err)}\n`);
    if (!res.headersSent) plain(res, 500, 'Internal error\n');
    else res.destroy();
  }
}
