/** Hash routes: the static host serves one index.html, and no page path ever reaches a server log. */
export function currentRoute(): string {
  return location.hash.replace(/^#/, '') || '/';
}

export function navigate(path: string): void {
  if (currentRoute() === path) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = path;
}
