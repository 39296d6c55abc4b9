import { decodePageToken, encodePageToken, type PageScope } from '../adapters/page-token.js';
import { signingSecret } from '../adapters/signing-secret.js';
import type { Page } from '../data/paginate.js';

/**
 * Runs one page of a list for the caller: verifies the incoming page token against the organization and the
 * query, and signs the next one. `query` must describe every filter, so a token cannot be replayed with others.
 */
export async function listPage<T>(
  scope: PageScope,
  pageToken: string | undefined,
  read: (startKey: Record<string, unknown> | undefined) => Promise<Page<T>>,
): Promise<{ items: T[]; next_page_token: string | null }> {
  const secret = await signingSecret();
  const startKey = decodePageToken(secret, scope, pageToken);
  const page = await read(startKey);
  return { items: page.items, next_page_token: encodePageToken(secret, scope, page.lastKey) };
}
