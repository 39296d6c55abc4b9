import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { RateLimitRepository } from '../../shared/data/rate-limit-repository.js';
import { createTestTable } from '../support/engines.js';

/**
 * The rate-limit writes on the request path, on DynamoDB Local: how many conditional updates one grant costs. The
 * clock is the test's (`now` is passed in); nothing depends on how fast anything runs.
 */
async function countingTable() {
  const table = await createTestTable('rate-path');
  const sent: string[] = [];
  const doc = {
    send: (command: unknown) => {
      if (command instanceof UpdateCommand) sent.push(command.input.ConditionExpression ?? '');
      return table.doc.send(command as never);
    },
  } as unknown as typeof table.doc;
  return { table: { ...table, doc }, sent };
}

const BUSY = 'tat BETWEEN :now AND :edge';
const IDLE = 'attribute_not_exists(tat) OR tat < :now';

describe('rate-limit writes per grant', () => {
  it('grants a bucket kept under its limit in one write, not a refused write and a second one', async () => {
    const { table, sent } = await countingTable();
    const repo = new RateLimitRepository(table);
    // 60,000 a minute: one cell a millisecond. Requests a second apart find the bucket full (TAT behind now).
    const t0 = Date.now();
    const limit = { perMinute: 60_000 };
    for (let i = 0; i < 5; i++) {
      const grant = await repo.take('key_idle#read', limit, t0 + i * 1_000, 30);
      expect(grant).toEqual({ granted: 30, tat: t0 + i * 1_000 + 30 });
    }
    // The first write knows nothing of the bucket and tries the busy case first; every later one goes straight to
    // the case the last grant showed.
    expect(sent).toEqual([BUSY, IDLE, IDLE, IDLE, IDLE, IDLE]);
  });

  it('keeps a busy bucket at one write per grant', async () => {
    const { table, sent } = await countingTable();
    const repo = new RateLimitRepository(table);
    // 60 a minute: one cell a second, and a burst of 60. Three grants of 10 within the same second.
    const t0 = Date.now();
    const limit = { perMinute: 60 };
    expect((await repo.take('key_busy#read', limit, t0, 10)).granted).toBe(10);
    expect((await repo.take('key_busy#read', limit, t0 + 10, 10)).granted).toBe(10);
    expect((await repo.take('key_busy#read', limit, t0 + 20, 10)).granted).toBe(10);
    expect(sent).toEqual([BUSY, IDLE, BUSY, BUSY]);
  });

  it('stays exact when another container moved the bucket behind its back: the table decides, not the hint', async () => {
    const { table, sent } = await countingTable();
    const a = new RateLimitRepository(table);
    const b = new RateLimitRepository(table);
    const t0 = Date.now();
    const limit = { perMinute: 60 };
    // A takes one cell; two seconds later its hint says the bucket is full again.
    expect((await a.take('org_1#read', limit, t0, 1)).granted).toBe(1);
    // Meanwhile B finds it full and takes 50 of its 60 cells.
    expect((await b.take('org_1#read', limit, t0 + 2_000, 50)).granted).toBe(50);
    sent.length = 0;
    // A asks for 20: its idle write is refused by the table, which answers what it holds, and A takes the 10 left.
    const grant = await a.take('org_1#read', limit, t0 + 2_000, 20);
    expect(grant.granted).toBe(10);
    expect(sent).toEqual([IDLE, BUSY]);
    // Nothing is left: refused, with the stored TAT, and no write granted anything.
    const refused = await a.take('org_1#read', limit, t0 + 2_000, 1);
    expect(refused.granted).toBe(0);
    expect(refused.tat).toBe(grant.tat);
  });
});
