/**
 * What the developer dashboard's responses carry, deployed (CloudFront, infra/dashboard-stack.ts) and on the local
 * stack (local/dashboard-files.ts) alike. No CDK import: the local stack loads this at start.
 */

/** Hashed files under assets/ never change under their name; index.html and config.json are checked on every load. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
export const PAGE_CACHE_CONTROL = 'no-cache';

/**
 * Scripts, styles and images from the site itself only; requests to the site and to the API only. Without
 * `apiOrigin` the API is on the site's own origin (the local stack).
 */
export function dashboardCsp(apiOrigin?: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${apiOrigin ? ` ${apiOrigin}` : ''}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
