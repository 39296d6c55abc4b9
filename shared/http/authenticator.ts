import type { ApiKeyRepository, TokenRecord } from '../data/api-key-repository.js';
import { MissingCredentialsError, UnauthorizedError } from '../domain/errors.js';
import { SCOPES_BY_TYPE } from '../domain/scopes.js';
import { hashToken, isWellFormedToken, type Environment } from '../adapters/tokens.js';
import type { Principal } from './principal.js';

/**
 * Resolves a bearer token to a principal, reading its token item on every request: a revocation takes effect on
 * the next request to any function (nothing is cached, and no request joins a read begun before it). Expiry is
 * checked to the second, and the scopes are the key's type's as declared today.
 */
export class Authenticator {
  constructor(
    private readonly repo: ApiKeyRepository,
    private readonly environment: Environment,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(header: string | undefined): Promise<Principal> {
    if (header === undefined || header.trim() === '') throw new MissingCredentialsError();
    const m = /^Bearer +(\S+)\s*$/i.exec(header);
    if (!m) throw new UnauthorizedError('The Authorization header must be "Bearer <token>"');
    const token = m[1]!;
    if (!isWellFormedToken(token)) throw new UnauthorizedError('The token is malformed');
    const tokenHash = hashToken(token);
    const record = await this.repo.findByTokenHash(tokenHash);
    if (!record) throw new UnauthorizedError('The token is unknown or revoked');
    this.refuseUnusable(record);
    return {
      organizationId: record.organization_id,
      apiKeyId: record.api_key_id,
      type: record.type,
      scopes: SCOPES_BY_TYPE[record.type],
      environment: record.environment,
      tokenHash,
      tokenIssuedAt: record.issued_at,
    };
  }

  /** A revoked, foreign-environment or expired token of an organization: refused, and attributed to it. */
  private refuseUnusable(record: TokenRecord): void {
    const identity = { organizationId: record.organization_id, apiKeyId: record.api_key_id };
    if (record.revoked_at !== null)
      throw new UnauthorizedError(
        record.revoked_reason === 'rotated_out'
          ? 'The token was replaced by a later rotation of its key'
          : 'The token is unknown or revoked',
        identity,
      );
    if (record.environment !== this.environment)
      throw new UnauthorizedError('The token belongs to another environment', identity);
    if (record.expires_at !== null && Date.parse(record.expires_at) <= this.now())
      throw new UnauthorizedError('The token has expired', identity);
  }
}
