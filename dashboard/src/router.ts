/** Hash routes: the static host serves one index.html, and no page path ever reaches a server log. */
export function currentRoute(): string {
  return location.hash.replace(/^#/, '') || '/';
}

export function navigate(path: string): void {
  if (currentRoute() === path) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = path;
}

/** A route's page, without its query: `/files?type=reversal` is the page `/files`. */
export function routePath(route: string): string {
  const at = route.indexOf('?');
  return at < 0 ? route : route.slice(0, at);
}

/** A route's query (`/files?type=reversal`), the filters a page keeps in the address so it can be shared. */
export function routeQuery(route: string): URLSearchParams {
  const at = route.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : route.slice(at + 1));
}

/** A page's address with `query`, empty values left out: `withQuery('/files', {type: 'reversal', to: ''})`. */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) params.set(k, v);
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}
