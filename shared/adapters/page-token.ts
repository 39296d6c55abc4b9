import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidPageTokenError } from '../domain/errors.js';

/**
 * Opaque, tamper-proof page tokens: the last evaluated key plus the organization and the query they belong
 * to, signed with HMAC-SHA256. A token altered, or replayed by another organization or with other filters,
 * fails verification and is answered 400 invalid_page_token.
 */
export interface PageScope {
  orgId: string;
  /** A stable description of the query (route and filters). */
  query: string;
}

type LastKey = Record<string, unknown>;

function sign(secret: Buffer, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

export function encodePageToken(secret: Buffer, scope: PageScope, lastKey: LastKey | undefined): string | null {
  if (!lastKey) return null;
  const payload = Buffer.from(JSON.stringify({ o: scope.orgId, q: scope.query, k: lastKey })).toString('base64url');
  return `${payload}.${sign(secret, payload)}`;
}

export function decodePageToken(secret: Buffer, scope: PageScope, token: string | undefined): LastKey | undefined {
  if (token === undefined) return undefined;
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined) throw new InvalidPageTokenError();
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new InvalidPageTokenError();
  let decoded: { o?: unknown; q?: unknown; k?: unknown };
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidPageTokenError();
  }
  if (decoded.o !== scope.orgId || decoded.q !== scope.query || typeof decoded.k !== 'object' || decoded.k === null) {
    throw new InvalidPageTokenError();
  }
  return decoded.k as LastKey;
}
