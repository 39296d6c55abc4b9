import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { systemDeps } from '../../shared/adapters/clock.js';
import { FieldEncryptor, LocalDataKeyProvider } from '../../shared/adapters/envelope-encryption.js';
import { hashToken } from '../../shared/adapters/tokens.js';
import { ApiKeyRepository } from '../../shared/data/api-key-repository.js';
import { EmployeeRepository } from '../../shared/data/employee-repository.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { queryPage } from '../../shared/data/paginate.js';
import { PaystubRepository } from '../../shared/data/paystub-repository.js';
import { EventRepository } from '../../shared/data/event-repository.js';
import { keys } from '../../shared/data/keys.js';
import { ConcurrentModificationError, EmployeeAlreadyExistsError } from '../../shared/domain/errors.js';
import { createApiKey, createOrganization, revokeApiKey, rotateApiKey } from '../../shared/use-cases/api-keys.js';
import {
  createEmployee,
  deleteEmployee,
  updateEmployee,
  type EmployeeServices,
} from '../../shared/use-cases/employees.js';
import { createTestTable } from '../support/engines.js';

/** Repositories and use cases against DynamoDB Local through the real SDK, each test in its own table. */
async function setup() {
  const table = await createTestTable();
  const organizations = new OrganizationRepository(table);
  const org = await createOrganization(organizations, systemDeps, { name: 'Repo Co', environment: 'sandbox' });
  const services: EmployeeServices = {
    employees: new EmployeeRepository(table),
    organizations,
    encryptor: new FieldEncryptor(new LocalDataKeyProvider(randomBytes(32).toString('base64'))),
    deps: systemDeps,
  };
  return { table, org, services, apiKeys: new ApiKeyRepository(table) };
}

const body = (email: string, extra: Record<string, unknown> = {}) => ({
  first_name: 'Mary',
  last_name: 'Jackson',
  email,
  employment_type: 'full_time',
  pay_group: 'default',
  pay_schedule: 'weekly',
  start_date: '2026-03-02',
  bank_account: { account_number: '4444333322', routing_number: '122105155', account_type: 'checking' },
  ...extra,
});

describe('organizations and tokens', () => {
  it('creates an organization with settings and an admin key, storing only the token hash', async () => {
    const { table, org, apiKeys } = await setup();
    const found = await apiKeys.findByTokenHash(hashToken(org.token));
    expect(found).toMatchObject({ organization_id: org.organization_id, type: 'admin', environment: 'sandbox' });
    const all = await table.doc.send(new ScanCommand({ TableName: table.tableName }));
    expect(JSON.stringify(all.Items)).not.toContain(org.token);
    // And the caps' counters (shared/data/org-quota.ts), starting at its first key.
    expect(all.Items!.map((i) => i.entity).sort()).toEqual(['api_key', 'organization', 'quotas', 'settings', 'token']);
    expect(all.Items!.find((i) => i.entity === 'quotas')).toMatchObject({ api_keys: 1, webhooks: 0 });
  });

  it('revokes a key by turning its token item into a tombstone in the same transaction, once', async () => {
    const { org, apiKeys } = await setup();
    const issued = await createApiKey(apiKeys, systemDeps, org.organization_id, 'sandbox', {
      name: 'temp',
      type: 'read-only',
    });
    expect(await apiKeys.findByTokenHash(hashToken(issued.token))).toBeDefined();
    const revoked = await revokeApiKey(apiKeys, systemDeps, org.organization_id, issued.record.api_key_id);
    expect(revoked.revoked_at).not.toBeNull();
    // Kept as the organization's, marked revoked: a request with it is refused and attributed (see the audit log).
    expect(await apiKeys.findByTokenHash(hashToken(issued.token))).toMatchObject({
      organization_id: org.organization_id,
      revoked_at: revoked.revoked_at,
      revoked_reason: 'revoked',
    });
    expect(await apiKeys.revoke(issued.record, new Date().toISOString())).toBe('already_revoked');
  });
});

describe('employees', () => {
  it('enforces email uniqueness in the database, case-insensitively, even under concurrency', async () => {
    const { org, services } = await setup();
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        createEmployee(services, org.organization_id, body(i % 2 ? 'Same@Example.com' : 'same@example.com')),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(19);
    for (const r of rejected) expect(r.reason).toBeInstanceOf(EmployeeAlreadyExistsError);
  });

  it('stores the account number encrypted, decryptable only for its organization', async () => {
    const { table, org, services } = await setup();
    const e = await createEmployee(services, org.organization_id, body('enc@example.com'));
    const raw = await table.doc.send(
      new GetCommand({
        TableName: table.tableName,
        Key: { PK: `ORG#${org.organization_id}`, SK: `EMP#${e.employee_id}` },
      }),
    );
    expect(JSON.stringify(raw.Item)).not.toContain('4444333322');
    const ciphertext = raw.Item!.bank_account.account_number_ciphertext as string;
    expect(await services.encryptor.decrypt(ciphertext, org.organization_id)).toBe('4444333322');
    await expect(services.encryptor.decrypt(ciphertext, 'org_other')).rejects.toThrow();
  });

  it('refuses a stale write (optimistic concurrency) and the use case re-applies the patch', async () => {
    const { org, services } = await setup();
    const e = await createEmployee(services, org.organization_id, body('occ@example.com'));
    const stale = { ...e };
    await services.employees.replace(e, { ...e, first_name: 'Dorothy', version: e.version + 1 });
    await expect(
      services.employees.replace(stale, { ...stale, last_name: 'Vaughan', version: stale.version + 1 }),
    ).rejects.toBeInstanceOf(ConcurrentModificationError);
    const patched = await updateEmployee(services, org.organization_id, e.employee_id, { last_name: 'Vaughan' });
    expect(patched).toMatchObject({ first_name: 'Dorothy', last_name: 'Vaughan', version: e.version + 2 });
  });

  it('removes an employee but keeps the record, and frees the email', async () => {
    const { org, services } = await setup();
    const e = await createEmployee(services, org.organization_id, body('gone@example.com'));
    await deleteEmployee(services, org.organization_id, e.employee_id);
    expect((await services.employees.get(org.organization_id, e.employee_id))?.status).toBe('removed');
    await expect(services.employees.getActive(org.organization_id, e.employee_id)).rejects.toThrow('Not found');
    const again = await createEmployee(services, org.organization_id, body('gone@example.com'));
    expect(again.employee_id).not.toBe(e.employee_id);
    const page = await services.employees.listActive(org.organization_id, 50);
    expect(page.items.map((x) => x.employee_id)).toEqual([again.employee_id]);
  });
});

describe('queryPage', () => {
  /** Partition P, items whose `keep` is true. */
  const KEEP = {
    KeyConditionExpression: 'PK = :pk',
    FilterExpression: '#keep = :t',
    ExpressionAttributeNames: { '#keep': 'keep' },
    ExpressionAttributeValues: { ':pk': 'P', ':t': true },
  };

  it('fills a page past filtered-out items and gives no token when the page ends the results', async () => {
    const table = await createTestTable();
    for (let i = 0; i < 30; i++) {
      await table.doc.send(
        new PutCommand({
          TableName: table.tableName,
          Item: { PK: 'P', SK: `S#${String(i).padStart(2, '0')}`, keep: i % 3 === 0 },
        }),
      );
    }
    const read = (limit: number, start?: Record<string, unknown>) =>
      queryPage(table, KEEP, limit, start, (item) => item.SK as string);
    const first = await read(4);
    expect(first.items).toEqual(['S#00', 'S#03', 'S#06', 'S#09']);
    expect(first.lastKey).toEqual({ PK: 'P', SK: 'S#09' });
    const second = await read(6, first.lastKey);
    expect(second.items).toEqual(['S#12', 'S#15', 'S#18', 'S#21', 'S#24', 'S#27']);
    expect(second.lastKey).toBeUndefined();
  });

  it('stops at its read budget with a short page and a cursor where reading stopped, however selective the filter', async () => {
    const table = await createTestTable();
    // 25 items, one match, at the end: as a filter that matches nothing in a run of 25,000.
    for (let i = 0; i < 25; i++) {
      await table.doc.send(
        new PutCommand({
          TableName: table.tableName,
          Item: { PK: 'P', SK: `S#${String(i).padStart(2, '0')}`, keep: i === 24 },
        }),
      );
    }
    let queries = 0;
    const send = table.doc.send.bind(table.doc);
    const counted = {
      ...table,
      doc: {
        send: (command: unknown) => {
          if (command instanceof QueryCommand) queries++;
          return (send as (c: unknown) => Promise<unknown>)(command);
        },
      },
    } as unknown as typeof table;
    // A tiny budget stands in for the real one (10 reads of 1,000 items).
    const read = (start?: Record<string, unknown>) =>
      queryPage(counted, KEEP, 3, start, (item) => item.SK as string, { maxReadsPerPage: 2, filteredReadSize: 5 });
    const first = await read();
    // The page's own size first (3 + 1), then one larger step (5): 9 items evaluated, none kept.
    expect(queries).toBe(2);
    expect(first.items).toEqual([]);
    expect(first.lastKey).toEqual({ PK: 'P', SK: 'S#08' });
    const found: string[] = [];
    let cursor = first.lastKey;
    while (cursor) {
      const page = await read(cursor);
      found.push(...page.items);
      cursor = page.lastKey;
    }
    expect(found).toEqual(['S#24']);
    expect(queries).toBeLessThanOrEqual(8);
  });
});

describe('paystub filters naming another organization', () => {
  it("answers an empty page without reading the other organization's index partitions", async () => {
    const table = await createTestTable();
    let queries = 0;
    const send = table.doc.send.bind(table.doc);
    (table.doc as { send: unknown }).send = (command: unknown, ...rest: unknown[]) => {
      if (command instanceof QueryCommand) queries++;
      return (send as (...a: unknown[]) => Promise<unknown>)(command, ...rest);
    };
    const paystubs = new PaystubRepository(table);
    const [orgA, orgB] = ['org_a', 'org_b'];
    await table.doc.send(
      new PutCommand({ TableName: table.tableName, Item: { PK: `ORG#${orgA}`, SK: 'PAYROLL#pay_1' } }),
    );
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { PK: `ORG#${orgA}`, SK: 'EMP#emp_1' } }));
    // A run filter alone reads no index at all (a run's paystubs are a range of primary keys).
    for (const filter of [{ employeeId: 'emp_1' }, { payrollId: 'pay_1', employeeId: 'emp_1' }]) {
      queries = 0;
      expect(await paystubs.listByEmployee(orgB, filter, 50)).toEqual({ items: [] });
      expect(queries, `${JSON.stringify(filter)} of another organization`).toBe(0);
      await paystubs.listByEmployee(orgA, filter, 50);
      expect(queries, `${JSON.stringify(filter)} of the organization`).toBe(1);
    }
  });
});

describe('revocation racing rotation', () => {
  it('leaves no working token after 20 concurrent rotate/revoke pairs, and never fails with a 500-kind error', async () => {
    const { org, apiKeys } = await setup();
    for (let i = 0; i < 20; i++) {
      const issued = await createApiKey(apiKeys, systemDeps, org.organization_id, 'sandbox', {
        name: `race ${i}`,
        type: 'read-only',
      });
      const [rotated, revoked] = await Promise.allSettled([
        rotateApiKey(apiKeys, systemDeps, org.organization_id, issued.record.api_key_id),
        revokeApiKey(apiKeys, systemDeps, org.organization_id, issued.record.api_key_id),
      ]);
      expect(revoked.status).toBe('fulfilled');
      const tokens = [issued.token];
      if (rotated.status === 'fulfilled') tokens.push(rotated.value.token);
      else expect((rotated.reason as Error).name).toMatch(/NotFoundError|ConcurrentModificationError/);
      for (const token of tokens) {
        const found = await apiKeys.findByTokenHash(hashToken(token));
        // Every token either call handed out is refused: absent, or a tombstone.
        expect(found === undefined || found.revoked_at !== null, `race ${i}`).toBe(true);
      }
    }
  });
});

describe('redelivery claims', () => {
  it('gives one redelivery a minute and tells a refused one how long to wait, from the refusal itself', async () => {
    const table = await createTestTable();
    const events = new EventRepository(table);
    await table.doc.send(
      new PutCommand({ TableName: table.tableName, Item: { ...keys.event('org_r', 'evt_r'), entity: 'event' } }),
    );
    const t = Date.parse('2026-11-25T12:00:00.000Z');
    const claim = (secondsLater: number) =>
      events.claimRedelivery('org_r', 'evt_r', new Date(t + secondsLater * 1000), 60);
    expect(await claim(0)).toBe(0);
    expect(await claim(30)).toBe(30);
    expect(await claim(59.5)).toBe(1);
    expect(await claim(60)).toBe(0);
    // A request whose clock read came a moment before the winning claim was stamped waits the interval, no more.
    expect(await claim(59.9)).toBe(60);
    // An id that is no event of the organization is never claimed.
    expect(await events.claimRedelivery('org_r', 'evt_none', new Date(t), 60)).toBe(60);
  });
});
