import type { TableRef } from '../adapters/dynamo.js';
import { config } from '../config/env.js';
import { ApiKeyRepository } from '../data/api-key-repository.js';
import { RateLimitRepository } from '../data/rate-limit-repository.js';
import { Authenticator } from './authenticator.js';
import { RateLimiter } from './rate-limiter.js';

/** What stands in front of every authenticated route: token lookup (every request), last-used stamps, rate limits. */
export interface Gate {
  authenticator: Authenticator;
  apiKeys: ApiKeyRepository;
  rateLimits: RateLimiter;
}

/** Built once, at module scope, by each function that serves authenticated routes. */
export function gateOver(table: TableRef): Gate {
  const apiKeys = new ApiKeyRepository(table);
  const c = config();
  return {
    apiKeys,
    authenticator: new Authenticator(apiKeys, c.PAYROLL_ENVIRONMENT),
    rateLimits: new RateLimiter(new RateLimitRepository(table)),
  };
}
