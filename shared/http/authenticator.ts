import type { ApiKeyRepository, TokenRecord } from '../data/api-key-repository.js';
import { MissingCredentialsError, UnauthorizedError } from '../domain/errors.js';
import { hashToken, isWellFormedToken, type Environment } from '../adapters/tokens.js';
import type { Principal } from './principal.js';

/**
 * Resolves a bearer token to a principal. Verified tokens are cached per container for `ttlMs`: a revoked key
 * keeps working on other warm containers for at most that long (5 s by default), and never on the container
 * that revoked it, which forgets it at once. Expiry is checked on every request, to the second.
 */
export class Authenticator {
  private readonly cache = new Map<string, { record: TokenRecord; fetchedAt: number }>();

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

  forget(tokenHash: string): void {
    this.cache.delete(tokenHash);
  }

  private async lookup(tokenHash: string): Promise<TokenRecord | undefined> {
    const hit = this.cache.get(tokenHash);
    if (hit && this.now() - hit.fetchedAt < this.ttlMs) return hit.record;
    const record = await this.repo.findByTokenHash(tokenHash);
    if (record && this.ttlMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(tokenHash, { record, fetchedAt: this.now() });
    } else {
      this.cache.delete(tokenHash);
    }
    return record;
  }
}
