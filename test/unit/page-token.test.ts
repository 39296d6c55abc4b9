import { describe, expect, it } from 'vitest';
import { decodePageToken, encodePageToken } from '../../shared/adapters/page-token.js';
import { InvalidPageTokenError } from '../../shared/domain/errors.js';

const secret = Buffer.from('a-test-secret-that-is-long-enough-for-hmac');
const scope = { orgId: 'org_a', query: 'employees' };
const key = { PK: 'ORG#org_a', SK: 'EMP#emp_1' };

describe('page tokens', () => {
  it('round-trips the last key for the same organization and query', () => {
    const token = encodePageToken(secret, scope, key)!;
    expect(decodePageToken(secret, scope, token)).toEqual(key);
  });

  it('gives no token when there is no further page', () => {
    expect(encodePageToken(secret, scope, undefined)).toBeNull();
    expect(decodePageToken(secret, scope, undefined)).toBeUndefined();
  });

  it('refuses a token of another organization, another query, another secret, or altered', () => {
    const token = encodePageToken(secret, scope, key)!;
    expect(() => decodePageToken(secret, { ...scope, orgId: 'org_b' }, token)).toThrow(InvalidPageTokenError);
    expect(() => decodePageToken(secret, { ...scope, query: 'api-keys' }, token)).toThrow(InvalidPageTokenError);
    expect(() => decodePageToken(Buffer.from('another-secret-another-secret-xx'), scope, token)).toThrow(
      InvalidPageTokenError,
    );
    const [payload, sig] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({ o: 'org_a', q: 'employees', k: { PK: 'ORG#org_b', SK: 'EMP#x' } }),
    ).toString('base64url');
    expect(() => decodePageToken(secret, scope, `${forged}.${sig}`)).toThrow(InvalidPageTokenError);
    expect(() => decodePageToken(secret, scope, `${payload}.${sig}x`)).toThrow(InvalidPageTokenError);
    expect(() => decodePageToken(secret, scope, 'garbage')).toThrow(InvalidPageTokenError);
    expect(() => decodePageToken(secret, scope, `${payload}.${sig}.extra`)).toThrow(InvalidPageTokenError);
  });
});
