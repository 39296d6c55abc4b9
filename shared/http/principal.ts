import type { Environment } from '../adapters/tokens.js';
import type { Scope, TokenType } from '../domain/scopes.js';

export interface Principal {
  organizationId: string;
  apiKeyId: string;
  type: TokenType;
  scopes: readonly Scope[];
  environment: Environment;
  tokenHash: string;
  /** When this token was issued (creation or last rotation); null for tokens issued before this was recorded. */
  tokenIssuedAt: string | null;
}
