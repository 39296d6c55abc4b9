import { describe, expect, it } from 'vitest';
import type { ApiKeyRepository, TokenRecord } from '../../shared/data/api-key-repository.js';
import { hashToken } from '../../shared/adapters/tokens.js';
import { Authenticator } from '../../shared/http/authenticator.js';

/**
 * The token cache on the request path: one read per token at a time, refreshed ahead of its expiry, and never an
 * answer older than the cache's bound (a revoked key is refused within `ttlMs`). The clock and the reads are the
 * test's: nothing here depends on how fast anything runs.
 */
const TOKEN = `pk_sandbox_${'a'.repeat(43)}`;
const TTL = 5_000;

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

describe('the token cache on the request path', () => {
  it('reads a token once for any number of requests that miss the cache together', async () => {
    const stored = { record: active };
    const { repo, reads } = manualRepo(stored);
    const clock = { now: 1_000_000 };
    const auth = new Authenticator(repo, 'sandbox', TTL, () => clock.now);
    const answers = Array.from({ length: 32 }, () => outcome(auth));
    await settle();
    expect(reads).toHaveLength(1);
    reads[0]!.resolve();
    expect(await Promise.all(answers)).toEqual(Array(32).fill('key_1'));
    // And a failed read fails every request that waited on it, then the next request reads again.
    clock.now += TTL;
    const failing = Array.from({ length: 3 }, () => outcome(auth));
    await settle();
    expect(reads).toHaveLength(2);
    reads[1]!.reject(new Error('engine down'));
    expect(await Promise.all(failing)).toEqual(Array(3).fill('engine down'));
    const again = outcome(auth);
    await settle();
    expect(reads).toHaveLength(3);
    reads[2]!.resolve();
    expect(await again).toBe('key_1');
  });

  it('refreshes a record past half its life in the background, so steady traffic never waits on its expiry', async () => {
    const stored = { record: active };
    const { repo, reads } = manualRepo(stored);
    const clock = { now: 1_000_000 };
    const auth = new Authenticator(repo, 'sandbox', TTL, () => clock.now);
    const first = outcome(auth);
    await settle();
    reads[0]!.resolve();
    expect(await first).toBe('key_1');

    // Young: answered from the cache, nothing read.
    clock.now += TTL / 2 - 1;
    expect(await outcome(auth)).toBe('key_1');
    expect(reads).toHaveLength(1);
    // Past half its life: still answered at once, and one read starts for all the requests that see it so.
    clock.now += 1;
    expect(await Promise.all([outcome(auth), outcome(auth), outcome(auth)])).toEqual(['key_1', 'key_1', 'key_1']);
    expect(reads).toHaveLength(2);
    reads[1]!.resolve();
    await settle();
    // Where the first record would have lapsed, the refreshed one answers with no read to wait for (the read
    // this request starts is the refresh of the refreshed record, half its life old now, and stays unanswered).
    clock.now += TTL / 2;
    expect(await outcome(auth)).toBe('key_1');
    expect(reads).toHaveLength(3);
  });

  it('refuses a revoked key once the cached record is as old as the bound, never later', async () => {
    const stored = { record: active };
    const { repo, reads } = manualRepo(stored);
    const clock = { now: 1_000_000 };
    const auth = new Authenticator(repo, 'sandbox', TTL, () => clock.now);
    const first = outcome(auth);
    await settle();
    const readStartedAt = clock.now;
    // The engine answers a while after the read started: the record's age counts from the start.
    clock.now += 400;
    reads[0]!.resolve();
    expect(await first).toBe('key_1');

    stored.record = revoked; // revoked on another container
    // A background refresh that fails keeps nothing alive past the bound.
    clock.now = readStartedAt + TTL / 2;
    expect(await outcome(auth)).toBe('key_1');
    reads[1]!.reject(new Error('engine down'));
    await settle();
    clock.now = readStartedAt + TTL;
    const late = outcome(auth);
    await settle();
    expect(reads).toHaveLength(3);
    reads[2]!.resolve();
    expect(await late).toBe('The token is unknown or revoked');
  });

  it('does not cache a read that was in flight when this container revoked the key', async () => {
    const stored = { record: active };
    const { repo, reads } = manualRepo(stored);
    const clock = { now: 1_000_000 };
    const auth = new Authenticator(repo, 'sandbox', TTL, () => clock.now);
    const before = outcome(auth);
    await settle();
    // The revocation commits and the container forgets the token while the read is still in flight.
    stored.record = revoked;
    auth.forget(hashToken(TOKEN));
    const after = outcome(auth);
    await settle();
    expect(reads).toHaveLength(2);
    // The later read answers first; the earlier one, begun before the revocation, last.
    reads[1]!.resolve();
    expect(await after).toBe('The token is unknown or revoked');
    reads[0]!.resolve();
    expect(await before).toBe('key_1');
    // What the stale read found is not kept: this container refuses the key from now on.
    expect(await outcome(auth)).toBe('The token is unknown or revoked');
    expect(reads).toHaveLength(2);
  });

  it('with the cache off, reads for every request', async () => {
    const stored = { record: active };
    const { repo, reads } = manualRepo(stored);
    const auth = new Authenticator(repo, 'sandbox', 0, () => 1_000_000);
    const answers = [outcome(auth), outcome(auth)];
    await settle();
    expect(reads).toHaveLength(2);
    for (const r of reads) r.resolve();
    expect(await Promise.all(answers)).toEqual(['key_1', 'key_1']);
  });

  it('does not join a read older than the bound: its answer may predate a revocation by more than ttlMs', async () => {
    const stored = { record: active };
    const { repo, reads } = manualRepo(stored);
    const clock = { now: 1_000_000 };
    const auth = new Authenticator(repo, 'sandbox', TTL, () => clock.now);
    // A slow read (throttled, retried) starts while the key is active…
    const early = outcome(auth);
    await settle();
    // …the key is revoked elsewhere, and a request arrives once that read is older than the bound.
    stored.record = revoked;
    clock.now += TTL + 1;
    const late = outcome(auth);
    await settle();
    expect(reads).toHaveLength(2);
    reads[1]!.resolve();
    reads[0]!.resolve();
    expect(await late).not.toBe('key_1');
    expect(await early).toBe('key_1');
  });
});
