import type { ApiKeyRepository, TokenRecord } from '../data/api-key-repository.js';
import { MissingCredentialsError, UnauthorizedError } from '../domain/errors.js';
import { hashToken, isWellFormedToken, type Environment } from '../adapters/tokens.js';
import type { Principal } from './principal.js';

/**
 * Resolves a bearer token to a principal. Verified tokens are cached per container for `ttlMs`: a revoked key
 * keeps working on other warm containers for at most that long (5 s by default), and never on the container
 * that revoked it, which forgets it at once. Expiry is checked on every request, to the second.
 *
 * One read per token at a time: requests that miss the cache while its read is in flight wait for that read
 * rather than each reading the item (a warm container at 32 concurrent requests otherwise read it 32 times at
 * every expiry). And a cached record past half its life is still answered, while one request reads it again in
 * the background, so steady traffic never waits on the expiry. Neither stretches the bound: a record is answered
 * only while younger than `ttlMs`, counted from the moment its read started.
 */
export class Authenticator {
  private readonly cache = new Map<string, { record: TokenRecord; fetchedAt: number }>();
  private readonly reading = new Map<string, { read: Promise<TokenRecord | undefined>; startedAt: number }>();

  constructor(
    private readonly repo: ApiKeyRepository,
    private readonly environment: Environment,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(header: string | undefined): Promise<Principal> {
    if (header === undefined || header.trim() === '') throw new MissingCredentialsError();
    const m = /^Bearer +(\S+)\s*$/i.exec(header);
    if (!m) throw new UnauthorizedError('The Authorization header must be "Bearer <token>"');
    const token = m[1]!;
    if (!isWellFormedToken(token)) throw new UnauthorizedError('The token is malformed');
    const tokenHash = hashToken(token);
    const record = await this.lookup(tokenHash);
    if (!record) throw new UnauthorizedError('The token is unknown or revoked');
    const identity = { organizationId: record.organization_id, apiKeyId: record.api_key_id };
    // A tombstone: the organization's token, refused, and attributed to it in its audit log.
    if (record.revoked_at !== null)
      throw new UnauthorizedError(
        record.revoked_reason === 'rotated_out'
          ? 'The token was replaced by a later rotation of its key'
          : 'The token is unknown or revoked',
        identity,
      );
    if (record.environment !== this.environment)
      throw new UnauthorizedError('The token belongs to another environment', identity);
    if (record.expires_at !== null && Date.parse(record.expires_at) <= this.now()) {
      throw new UnauthorizedError('The token has expired', identity);
    }
    return {
      organizationId: record.organization_id,
      apiKeyId: record.api_key_id,
      type: record.type,
      scopes: record.scopes,
      environment: record.environment,
      tokenHash,
      tokenIssuedAt: record.issued_at,
    };
  }

  /** A read already in flight when the key was revoked is not cached either: the next request reads again. */
  forget(tokenHash: string): void {
    this.cache.delete(tokenHash);
    this.reading.delete(tokenHash);
  }

  private lookup(tokenHash: string): Promise<TokenRecord | undefined> {
    const hit = this.cache.get(tokenHash);
    if (hit) {
      const age = this.now() - hit.fetchedAt;
      if (age < this.ttlMs) {
        if (age >= this.ttlMs / 2 && !this.reading.has(tokenHash)) {
          // A failed refresh changes nothing: the entry lapses at its time and the next request reads in the open.
          this.read(tokenHash).catch(() => undefined);
        }
        return Promise.resolve(hit.record);
      }
    }
    return this.read(tokenHash);
  }

  private read(tokenHash: string): Promise<TokenRecord | undefined> {
    // With the cache off every request reads for itself: joining a read begun before a revocation would not be. A
    // read older than the bound (a slow one, retried through throttling) is not joined either: its answer may
    // predate a revocation by more than `ttlMs`.
    const shared = this.ttlMs > 0 ? this.reading.get(tokenHash) : undefined;
    if (shared && this.now() - shared.startedAt < this.ttlMs) return shared.read;
    const startedAt = this.now();
    const read: Promise<TokenRecord | undefined> = this.repo.findByTokenHash(tokenHash).then(
      (record) => {
        if (this.reading.get(tokenHash)?.read === read) {
          this.reading.delete(tokenHash);
          if (record && this.ttlMs > 0) {
            if (this.cache.size > 10_000) this.cache.clear();
            this.cache.set(tokenHash, { record, fetchedAt: startedAt });
          } else {
            this.cache.delete(tokenHash);
          }
        }
        return record;
      },
      (err: unknown) => {
        if (this.reading.get(tokenHash)?.read === read) this.reading.delete(tokenHash);
        throw err;
      },
    );
    if (this.ttlMs > 0) this.reading.set(tokenHash, { read, startedAt });
    return read;
  }
}
