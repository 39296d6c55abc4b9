import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  DisbursementSequenceRepository,
  TraceSequenceExhaustedError,
} from '../../shared/data/disbursement-sequence-repository.js';
import { MAX_TRACE_SEQUENCE, fileNumbering } from '../../shared/domain/disbursement.js';
import { createTestTable, type TestTable } from '../support/engines.js';

const NOW = new Date('2026-11-25T15:00:00Z');
const request = {
  odfi: '02100002',
  destination: '021000021',
  creationDate: '2026-11-25',
  traceCount: 3,
  now: NOW,
  owner: { payrollId: 'pay_seq' },
  entries: 3,
};

/** Reserves and commits, as a run's plan does (the counters' updates in the plan's transaction). */
async function commit(repo: DisbursementSequenceRepository, table: TestTable, r = request) {
  const reservation = await repo.reserve('org_seq', r);
  await table.doc.send(new TransactWriteCommand({ TransactItems: reservation.items }));
  return reservation;
}

describe('the disbursement sequences on the real engine', () => {
  it('gives the 37th file of a day to one destination `A` again, and another destination or day starts at `A`', async () => {
    const table = await createTestTable();
    const repo = new DisbursementSequenceRepository(table);
    const modifiers: string[] = [];
    for (let i = 0; i < 37; i++) modifiers.push((await commit(repo, table)).fileIdModifier);
    expect(modifiers.join('')).toBe('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789A');
    expect((await commit(repo, table, { ...request, destination: '011000015' })).fileIdModifier).toBe('A');
    expect((await commit(repo, table, { ...request, creationDate: '2026-11-27' })).fileIdModifier).toBe('A');
    // The trace sequence is per ODFI, whatever the destination or the day: 39 blocks of 3, none shared.
    expect((await commit(repo, table)).traceStart).toBe(39 * 3 + 1);
  });

  it('refuses a block past the 7-digit sequence rather than reuse a number', async () => {
    const table = await createTestTable();
    const repo = new DisbursementSequenceRepository(table);
    await commit(repo, table, { ...request, traceCount: MAX_TRACE_SEQUENCE - 2 });
    await expect(repo.reserve('org_seq', request)).rejects.toBeInstanceOf(TraceSequenceExhaustedError);
    expect((await commit(repo, table, { ...request, traceCount: 2 })).traceStart).toBe(MAX_TRACE_SEQUENCE - 1);
  });

  it('keeps a run planned before blocks existed on its own numbering: 1 up, modifier A', () => {
    expect(fileNumbering({ trace_start: null, file_id_modifier: null })).toEqual({
      traceStart: 1,
      fileIdModifier: 'A',
    });
    expect(fileNumbering({ trace_start: 25_001, file_id_modifier: 'C' })).toEqual({
      traceStart: 25_001,
      fileIdModifier: 'C',
    });
  });
});
