/**
 * Every primary and index key of the single table is built here, so key shapes live in one place.
 *
 * | entity            | PK                     | SK                      | GSI1PK / GSI1SK |
 * |-------------------|------------------------|-------------------------|-----------------|
 * | organization      | ORG#<org>              | ORG                     |                 |
 * | settings          | ORG#<org>              | SETTINGS                |                 |
 * | api key           | ORG#<org>              | APIKEY#<key>            |                 |
 * | token (by hash)   | TOKEN#<sha256>         | TOKEN                   |                 |
 * | employee          | ORG#<org>              | EMP#<employee>          |                 |
 * | email uniqueness  | ORG#<org>              | EMAIL#<lower-case email>|                 |
 */
export const TABLE_KEYS = { pk: 'PK', sk: 'SK' } as const;
export const GSI1 = { name: 'GSI1', pk: 'GSI1PK', sk: 'GSI1SK' } as const;
export const GSI2 = { name: 'GSI2', pk: 'GSI2PK', sk: 'GSI2SK' } as const;
export const TTL_ATTRIBUTE = 'ttl';

export interface Key {
  PK: string;
  SK: string;
}

export const keys = {
  organization: (orgId: string): Key => ({ PK: `ORG#${orgId}`, SK: 'ORG' }),
  settings: (orgId: string): Key => ({ PK: `ORG#${orgId}`, SK: 'SETTINGS' }),
  apiKey: (orgId: string, apiKeyId: string): Key => ({ PK: `ORG#${orgId}`, SK: `APIKEY#${apiKeyId}` }),
  apiKeyPrefix: 'APIKEY#',
  token: (tokenHash: string): Key => ({ PK: `TOKEN#${tokenHash}`, SK: 'TOKEN' }),
  employee: (orgId: string, employeeId: string): Key => ({ PK: `ORG#${orgId}`, SK: `EMP#${employeeId}` }),
  employeePrefix: 'EMP#',
  employeeEmail: (orgId: string, email: string): Key => ({ PK: `ORG#${orgId}`, SK: `EMAIL#${email.toLowerCase()}` }),
  orgPartition: (orgId: string): string => `ORG#${orgId}`,
} as const;
