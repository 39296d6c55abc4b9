import { describe, expect, it } from 'vitest';
import type { ApiKeyRepository, TokenRecord } from '../../shared/data/api-key-repository.js';
import { hashToken } from '../../shared/adapters/tokens.js';
import { Authenticator } from '../../shared/http/authenticator.js';

/**
 * Revocation at once (CONTRACT §2): every request reads its token item, and no request joins a read begun before
 * it, so the first request after a revocation is refused wherever it lands. The clock and the reads are the test's.
 */
const TOKEN = `pk_sandbox_${'a'.repeat(43)}`;

const active: TokenRecord = {
  api_key_id: 'key_1',
  organization_id: 'org_1',
  environment: 'sandbox',
  type: 'admin',
  scopes: ['read:employees'],
  expires_at: null,
  issued_at: '2026-11-01T00:00:00.000Z',
  revoked_at: null,
  revoked_reason: null,
};
const revoked: TokenRecord = { ...active, revoked_at: '2026-11-25T00:00:00.000Z', revoked_reason: 'revoked' };

/** A token store whose reads the test resolves by hand, in order. */
function manualRepo(stored: { record: TokenRecord }) {
  const reads: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  const repo = {
    findByTokenHash: (hash: string) =>
      new Promise<TokenRecord | undefined>((resolve, reject) => {
        expect(hash).toBe(hashToken(TOKEN));
        // The read sees the store as it was when the read started, however late its answer comes.
        const seen = stored.record;
        reads.push({ resolve: () => resolve(seen), reject });
      }),
  } as unknown as ApiKeyRepository;
  return { repo, reads };
}

const settle = () => new Promise((r) => setImmediate(r));
const outcome = (auth: Authenticator) =>
  auth.authenticate(`Bearer ${TOKEN}`).then(
    (p) => p.apiKeyId,
    (e: Error & { reason?: string }) => e.reason ?? e.message,
  );

describe('token lookup on the request path', () => {
  it('reads the token for every request, even concurrent ones: none answers from an earlier read', async () => {
    const stored = { record: active };
    const { repo, reads } = manualRepo(stored);
    const auth = new Authenticator(repo, 'sandbox', () => 1_000_000);
    const answers = Array.from({ length: 4 }, () => outcome(auth));
    await settle();
    expect(reads).toHaveLength(4);
    for (const r of reads) r.resolve();
    expect(await Promise.all(answers)).toEqual(Array(4).fill('key_1'));
  });

  it('refuses a revoked key on the first request after the revocation, though the key answered a moment before', async () => {
    const stored = { record: active };
    const { repo, reads } = manualRepo(stored);
    const auth = new Authenticator(repo, 'sandbox', () => 1_000_000);
    const before = outcome(auth);
    await settle();
    reads[0]!.resolve();
    expect(await before).toBe('key_1');
    stored.record = revoked; // revoked by another function's container
    const after = outcome(auth);
    await settle();
    expect(reads).toHaveLength(2);
    reads[1]!.resolve();
    expect(await after).toBe('The token is unknown or revoked');
  });

  it('does not let a request that arrives after the revocation ride on a read begun before it', async () => {
    const stored = { record: active };
    const { repo, reads } = manualRepo(stored);
    const auth = new Authenticator(repo, 'sandbox', () => 1_000_000);
    const early = outcome(auth);
    await settle();
    stored.record = revoked;
    const late = outcome(auth);
    await settle();
    expect(reads).toHaveLength(2);
    reads[1]!.resolve();
    reads[0]!.resolve();
    expect(await late).toBe('The token is unknown or revoked');
    expect(await early).toBe('key_1');
  });

  it("answers the scopes of the key's type as declared now, not those stored when the key was made", async () => {
    const stored = { record: { ...active, scopes: ['read:employees'] as TokenRecord['scopes'] } };
    const { repo, reads } = manualRepo(stored);
    const auth = new Authenticator(repo, 'sandbox', () => 1_000_000);
    const principal = auth.authenticate(`Bearer ${TOKEN}`);
    await settle();
    reads[0]!.resolve();
    expect((await principal).scopes).toContain('read:disbursements');
  });
});
