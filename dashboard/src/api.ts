import { clearToken, readToken } from './session.js';

/** One problem of a refused request, as the API's envelope lists it in `error.details`. */
export interface Problem {
  field?: string;
  code?: string;
  message: string;
  [extra: string]: unknown;
}

/** A refused request, carrying the envelope's error (code, message, every detail) and its request id. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Problem[] = [],
    readonly requestId: string | null = null,
  ) {
    super(message);
  }
}

/**
 * Where the API lives. Locally the dashboard is served by the API itself (same origin, base ""); deployed, the
 * static site's `config.json` names the API's URL. A missing or unreadable config means same origin.
 */
let baseUrl = '';

export async function loadConfig(): Promise<void> {
  try {
    const res = await fetch('config.json', { cache: 'no-store' });
    if (!res.ok) return;
    const config = (await res.json()) as { api_base_url?: unknown };
    if (typeof config.api_base_url === 'string') baseUrl = config.api_base_url.replace(/\/+$/, '');
  } catch {
    // Same origin.
  }
}

/** Called when the API says the token is no longer good (401): the app goes back to sign-in. */
let onUnauthorized: (message: string) => void = () => undefined;
export function setUnauthorizedHandler(handler: (message: string) => void): void {
  onUnauthorized = handler;
}

export type Query = Record<string, string | number | undefined | null>;

function url(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {}))
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return `${baseUrl}${path}${qs ? `?${qs}` : ''}`;
}

async function send(
  method: string,
  path: string,
  options: { query?: Query; body?: unknown; accept?: string; token?: string; headers?: Record<string, string> },
): Promise<Response> {
  const token = options.token ?? readToken();
  const headers: Record<string, string> = { ...options.headers, Accept: options.accept ?? 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url(path, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      // The token travels in the Authorization header only: no cookie is ever sent or set.
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The API could not be reached. Check your connection and try again.');
  }
  if (!res.ok) throw await errorOf(res, options.token === undefined);
  return res;
}

async function errorOf(res: Response, signedIn: boolean): Promise<ApiError> {
  let body: { error?: { code?: string; message?: string; details?: Problem[] }; request_id?: string } | undefined;
  try {
    body = (await res.json()) as typeof body;
  } catch {
    body = undefined;
  }
  const error = new ApiError(
    res.status,
    body?.error?.code ?? 'http_error',
    body?.error?.message ?? `The API answered ${res.status} ${res.statusText}`,
    Array.isArray(body?.error?.details) ? body!.error!.details! : [],
    body?.request_id ?? res.headers.get('X-Request-Id'),
  );
  if (res.status === 401 && signedIn) {
    clearToken();
    onUnauthorized('Your session ended: the token was refused (revoked, expired or rotated). Sign in again.');
  }
  return error;
}

export interface Envelope<T> {
  status: number;
  message: string;
  data: T;
  request_id: string;
}

export async function api<T>(
  method: string,
  path: string,
  options: { query?: Query; body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<Envelope<T>> {
  const res = await send(method, path, options);
  return (await res.json()) as Envelope<T>;
}

/** A binary answer (a paystub PDF), fetched with the token: a bare link could not carry it. */
export async function apiBlob(path: string, accept: string): Promise<Blob> {
  const res = await send('GET', path, { accept });
  return res.blob();
}

export interface Page<T> {
  items: T[];
  next_page_token: string | null;
}

/** One page of a list: the API answers `{<name>: [...], next_page_token}`. */
export async function listPage<T>(path: string, name: string, query: Query = {}): Promise<Page<T>> {
  const { data } = await api<Record<string, unknown>>('GET', path, { query });
  return { items: (data[name] ?? []) as T[], next_page_token: (data.next_page_token as string | null) ?? null };
}
