import { PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { parseControlTotals } from '../../shared/adapters/nacha.js';
import { objectKeys } from '../../shared/adapters/object-store.js';
import { keys } from '../../shared/data/keys.js';
import { MAX_TRACE_SEQUENCE } from '../../shared/domain/disbursement.js';
import { centsToNumber } from '../../shared/domain/money.js';
import {
  processMessage,
  SIMULATED_RETURN_ACCOUNT,
  type ProcessorServices,
} from '../../shared/use-cases/process-payroll.js';
import { submitPayroll, type SubmitOutcome } from '../../shared/use-cases/submit-payroll.js';
import { updateSettings } from '../../shared/use-cases/settings.js';
import {
  assertBankRules,
  assertDistinctModifiers,
  assertTracesAcrossFiles,
  readNacha,
  type ReadFile,
} from '../support/nacha-check.js';
import { drain, payrollBody, payrollWorld, paystubItemsOf, runFile } from '../support/payroll-fixture.js';

const EMPLOYEES = 25;
const CHUNK = 10;

type World = Awaited<ReturnType<typeof payrollWorld>>;

const FUNDING = { routing_number: '011000015', account_number: '99887766554433', account_type: 'checking' } as const;

async function withFundingAccount(world: World) {
  await updateSettings(
    world.services,
    { organizationId: world.org.organization_id, environment: 'sandbox' },
    { funding_account: FUNDING },
  );
}

/** The run's file, read back by two independent parsers and held to the bank's rules. */
async function fileOf(world: World, payrollId: string, balanced: boolean): Promise<ReadFile> {
  const orgId = world.org.organization_id;
  const record = (await world.services.payrolls.get(orgId, payrollId))!;
  const file = readNacha((await runFile(world.services, orgId, payrollId))!);
  assertBankRules(file, {
    payDate: record.pay_date,
    balanced,
    ...(balanced && {
      fundingAccount: {
        routing: FUNDING.routing_number,
        account: FUNDING.account_number,
        accountType: FUNDING.account_type,
      },
    }),
  });
  return file;
}

async function submit(world: Awaited<ReturnType<typeof payrollWorld>>, body = payrollBody(world.employeeIds)) {
  const outcome = await submitPayroll(
    { ...world.services, chunkSize: CHUNK },
    { organizationId: world.org.organization_id, environment: 'sandbox' },
    body,
    { dryRun: false },
  );
  if (outcome.kind !== 'accepted') throw new Error('expected acceptance');
  return outcome as Extract<SubmitOutcome, { kind: 'accepted' }>;
}

async function paystubsOf(world: Awaited<ReturnType<typeof payrollWorld>>, payrollId: string) {
  return paystubItemsOf(world.table, payrollId);
}

/** Everything a finished run must be, however many times its steps ran. */
async function expectExactlyOnce(world: Awaited<ReturnType<typeof payrollWorld>>, payrollId: string) {
  const orgId = world.org.organization_id;
  const record = (await world.services.payrolls.get(orgId, payrollId))!;
  expect(record.status).toBe('completed');
  expect(record.status_history.map((h) => h.status)).toEqual(['pending', 'processing', 'completed']);
  const stubs = await paystubsOf(world, payrollId);
  expect(stubs).toHaveLength(EMPLOYEES);
  expect(new Set(stubs.map((s) => s.employee_id))).toEqual(new Set(world.employeeIds));
  const file = (await runFile(world.services, orgId, payrollId))!;
  assertBankRules(readNacha(file), { payDate: record.pay_date, balanced: false });
  const control = parseControlTotals(file);
  expect(control.entryAddendaCount).toBe(EMPLOYEES);
  expect(control.totalCreditCents).toBe(record.totals.net_pay);
  expect(stubs.reduce((sum, s) => sum + (s.net_pay as number), 0)).toBe(record.totals.net_pay);
  const fileTraces = file
    .split('\n')
    .filter((l) => l.startsWith('6'))
    .map((l) => l.slice(79, 94));
  expect(new Set(fileTraces).size).toBe(EMPLOYEES);
  expect(new Set(stubs.map((s) => (s.payment as { trace_number: string }).trace_number))).toEqual(new Set(fileTraces));
  expect(record.disbursement).toMatchObject({
    entry_count: EMPLOYEES,
    total_credit: record.totals.net_pay,
    entry_hash: control.entryHash,
  });
  return record;
}

type Wrap = (s: ProcessorServices) => void;

/** Makes `method` crash once, right after (or before) its real effect: the worst moment for a worker to die. */
function crash<T extends object>(
  target: T,
  method: keyof T,
  moment: 'after' | 'before',
  when: (...args: any[]) => boolean = () => true,
) {
  const original = (target[method] as (...a: unknown[]) => Promise<unknown>).bind(target);
  let fired = false;
  (target as Record<keyof T, unknown>)[method] = async (...args: unknown[]) => {
    const hit = !fired && when(...args);
    if (hit && moment === 'before') {
      fired = true;
      throw new Error(`injected crash before ${String(method)}`);
    }
    const result = await original(...args);
    if (hit) {
      fired = true;
      throw new Error(`injected crash after ${String(method)}`);
    }
    return result;
  };
}

const faults: [string, Wrap][] = [
  [
    'after pending → processing',
    (s) => crash(s.payrolls, 'transition', 'after', (_r, move) => (move as { to: string }).to === 'processing'),
  ],
  [
    'after writing a chunk file',
    (s) => crash(s.objects, 'putJson', 'after', (key: string) => key.includes('/chunks/')),
  ],
  ['after recording the chunk plan', (s) => crash(s.payrolls, 'planChunks', 'after')],
  ['after enqueueing the chunks', (s) => crash(s.queue, 'sendAll', 'after')],
  ["after writing a chunk's paystubs", (s) => crash(s.paystubs, 'putAll', 'after')],
  ["before writing a chunk's paystubs", (s) => crash(s.paystubs, 'putAll', 'before')],
  [
    "after writing a chunk's NACHA entries",
    (s) => crash(s.objects, 'putText', 'after', (key: string) => key.includes('/entries/')),
  ],
  ['after marking a chunk done', (s) => crash(s.payrolls, 'markChunkDone', 'after')],
  ['after enqueueing finalize', (s) => crash(s.queue, 'send', 'after')],
  [
    'after writing the NACHA file',
    (s) => crash(s.objects, 'putText', 'after', (key: string) => key.endsWith('disbursement.ach')),
  ],
  [
    'after processing → completed',
    (s) => crash(s.payrolls, 'transition', 'after', (_r, move) => (move as { to: string }).to === 'completed'),
  ],
];

describe('the payroll pipeline on the real engines', () => {
  it('turns a submission into paystubs and a NACHA file that agree', async () => {
    const world = await payrollWorld(EMPLOYEES);
    const accepted = await submit(world);
    expect(accepted.data).toMatchObject({ status: 'pending', employee_count: EMPLOYEES });
    const failures = await drain(
      world.services,
      world.queues.payroll,
      world.org.organization_id,
      accepted.data.payroll_id,
    );
    expect(failures).toBe(0);
    const record = await expectExactlyOnce(world, accepted.data.payroll_id);
    expect(centsToNumber(record.totals.net_pay)).toBe(accepted.data.totals.net_pay);
    expect(record.chunk_count).toBe(3);
    expect([...record.chunks_done].sort()).toEqual([0, 1, 2]);
  });

  it.each(faults)(
    'stays exactly-once with a crash %s and a re-delivery, over two consecutive runs',
    async (_, inject) => {
      const world = await payrollWorld(EMPLOYEES);
      const files: ReadFile[] = [];
      const bodies = [payrollBody(world.employeeIds), payrollBody(world.employeeIds, { type: 'off_cycle' })];
      for (const body of bodies) {
        const accepted = await submit(world, body);
        inject(world.services);
        const failures = await drain(
          world.services,
          world.queues.payroll,
          world.org.organization_id,
          accepted.data.payroll_id,
        );
        expect(failures).toBeGreaterThanOrEqual(1);
        await expectExactlyOnce(world, accepted.data.payroll_id);
        files.push(await fileOf(world, accepted.data.payroll_id, false));
      }
      // Two files of one organization on one day: their own modifiers, and trace numbers that never meet.
      assertTracesAcrossFiles(files);
      assertDistinctModifiers(files);
      expect(files.map((f) => f.header.fileIdModifier)).toEqual(['A', 'B']);
      const traces = files.map((f) => f.batches[0]!.entries.map((e) => Number(e.traceNumber.slice(8))));
      expect(traces[0]).toEqual(Array.from({ length: EMPLOYEES }, (_, i) => i + 1));
      expect(traces[1]).toEqual(Array.from({ length: EMPLOYEES }, (_, i) => EMPLOYEES + i + 1));
    },
  );

  it('balances each file with one offset debit to the funding account, and settles a Saturday pay date on Friday', async () => {
    const world = await payrollWorld(EMPLOYEES);
    await withFundingAccount(world);
    const accepted = await submit(world, payrollBody(world.employeeIds, { pay_date: '2026-11-28' }));
    expect(accepted.data).toMatchObject({ effective_entry_date: '2026-11-27', release_by: '2026-11-25' });
    await drain(world.services, world.queues.payroll, world.org.organization_id, accepted.data.payroll_id);
    const record = (await world.services.payrolls.get(world.org.organization_id, accepted.data.payroll_id))!;
    expect(record.status).toBe('completed');
    const file = await fileOf(world, accepted.data.payroll_id, true);
    const batch = file.batches[0]!;
    expect(batch.effectiveEntryDate).toBe('2026-11-27');
    expect(batch.entries).toHaveLength(EMPLOYEES + 1);
    expect(batch.entries.at(-1)).toMatchObject({
      transactionCode: 27,
      routing: FUNDING.routing_number,
      account: FUNDING.account_number,
      amountCents: record.totals.net_pay,
      traceNumber: expect.stringMatching(new RegExp(`${String(EMPLOYEES + 1).padStart(7, '0')}$`)),
    });
    expect(file.control).toMatchObject({
      totalDebitCents: record.totals.net_pay,
      totalCreditCents: record.totals.net_pay,
    });
    expect(record.disbursement).toMatchObject({
      total_debit: record.totals.net_pay,
      total_credit: record.totals.net_pay,
      entry_count: EMPLOYEES + 1,
    });
  });

  it('gives runs planned at the same moment distinct modifiers and disjoint trace blocks (counters race-safe)', async () => {
    const world = await payrollWorld(12);
    await withFundingAccount(world);
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        submit(world, payrollBody(world.employeeIds, { type: 'off_cycle', pay_date: `2026-12-0${i + 1}` })),
      ),
    );
    // Every start message planned concurrently: the counters are contended on purpose.
    for (const run of runs)
      await drain(world.services, world.queues.payroll, world.org.organization_id, run.data.payroll_id);
    const files: ReadFile[] = [];
    for (const run of runs) files.push(await fileOf(world, run.data.payroll_id, true));
    files.sort((a, b) => a.batches[0]!.entries[0]!.traceNumber.localeCompare(b.batches[0]!.entries[0]!.traceNumber));
    assertTracesAcrossFiles(files);
    assertDistinctModifiers(files);
    expect(files.map((f) => f.header.fileIdModifier).sort()).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    // Each block is 12 entries and the offset: together they use 1–78 with nothing skipped or shared.
    const all = files
      .flatMap((f) => f.batches[0]!.entries.map((e) => Number(e.traceNumber.slice(8))))
      .sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: 78 }, (_, i) => i + 1));
  });

  it('reserves again when another run took the counters between reading them and recording the plan', async () => {
    const world = await payrollWorld(3);
    const sequences = world.services.sequences;
    const reserve = sequences.reserve.bind(sequences);
    let raced = 0;
    sequences.reserve = async (orgId, request) => {
      const mine = await reserve(orgId, request);
      if (raced++ === 0) {
        // Another run of the organization commits its reservation first: ours must lose and read again.
        const theirs = await reserve(orgId, { ...request, traceCount: 3 });
        await world.table.doc.send(new TransactWriteCommand({ TransactItems: theirs.items }));
      }
      return mine;
    };
    const accepted = await submit(world, payrollBody(world.employeeIds));
    await drain(world.services, world.queues.payroll, world.org.organization_id, accepted.data.payroll_id);
    expect(raced).toBe(2); // read, lost the race to theirs, read again
    const file = await fileOf(world, accepted.data.payroll_id, false);
    expect(file.header.fileIdModifier).toBe('B');
    expect(file.batches[0]!.entries.map((e) => e.traceNumber.slice(8))).toEqual(['0000004', '0000005', '0000006']);
    const record = (await world.services.payrolls.get(world.org.organization_id, accepted.data.payroll_id))!;
    expect(record).toMatchObject({ trace_start: 4, file_id_modifier: 'B' });
  });

  it('refuses a run, storing nothing, while the stored originator holds what the file cannot carry', async () => {
    const world = await payrollWorld(2);
    const orgId = world.org.organization_id;
    const current = (await world.services.organizations.getSettings(orgId))!;
    // Saved before the settings were checked as strictly as the file needs: lower case, a space inside.
    await world.services.organizations.putSettings(
      orgId,
      {
        ...current,
        originator: { ...current.originator, immediate_origin: 'acmepayrol', company_identification: '12 345 678' },
        updated_at: new Date(Date.parse(current.updated_at) + 1).toISOString(),
      },
      current.updated_at,
    );
    const refused = await submit(world).catch((err: unknown) => err);
    expect(refused).toMatchObject({ kind: 'unprocessable', code: 'originator_not_configured' });
    expect((refused as { details: { field: string }[] }).details.map((d) => d.field).sort()).toEqual([
      'originator.company_identification',
      'originator.immediate_origin',
    ]);
    expect((await world.services.payrolls.list(orgId, {}, 10)).items).toHaveLength(0);
  });

  it('starts the numbering of an organization whose earlier files were numbered per run clear of all of them', async () => {
    const world = await payrollWorld(3);
    const orgId = world.org.organization_id;
    // Settings as an organization created before per-organization sequences had them: no sequences_since.
    const { sequences_since: _since, ...legacy } = (await world.services.organizations.getSettings(orgId))!;
    await world.table.doc.send(
      new PutCommand({
        TableName: world.table.tableName,
        Item: { ...keys.settings(orgId), entity: 'settings', ...legacy },
      }),
    );
    const files: ReadFile[] = [];
    for (const body of [payrollBody(world.employeeIds), payrollBody(world.employeeIds, { type: 'off_cycle' })]) {
      const accepted = await submit(world, body);
      await drain(world.services, world.queues.payroll, orgId, accepted.data.payroll_id);
      files.push(await fileOf(world, accepted.data.payroll_id, false));
    }
    // Its earlier files used sequences 1 to at most 25,000 and modifier A, possibly today.
    expect(files.map((f) => f.header.fileIdModifier)).toEqual(['B', 'C']);
    expect(files.map((f) => f.batches[0]!.entries.map((e) => Number(e.traceNumber.slice(8))))).toEqual([
      [25_001, 25_002, 25_003],
      [25_004, 25_005, 25_006],
    ]);
  });

  it('fails a run at once, with the reason, when its trace sequence is used up (no retry can write its file)', async () => {
    const world = await payrollWorld(3);
    const orgId = world.org.organization_id;
    const { originator } = (await world.services.organizations.getSettings(orgId))!;
    // Two numbers left for a run of three.
    await world.table.doc.send(
      new PutCommand({
        TableName: world.table.tableName,
        Item: {
          ...keys.traceSequence(orgId, originator.originating_dfi_identification),
          entity: 'sequence',
          value: MAX_TRACE_SEQUENCE - 2,
        },
      }),
    );
    const accepted = await submit(world);
    const failures = await drain(world.services, world.queues.payroll, orgId, accepted.data.payroll_id);
    expect(failures).toBe(0);
    const record = (await world.services.payrolls.get(orgId, accepted.data.payroll_id))!;
    expect(record.status).toBe('failed');
    expect(record.failure_reason).toBe(
      `The disbursement file cannot be written: The 7-digit trace sequence of this organization's files for ODFI ${originator.originating_dfi_identification} is used up`,
    );
    expect(
      await world.services.objects.getText(objectKeys.disbursement(orgId, accepted.data.payroll_id)),
    ).toBeUndefined();
  });

  it('survives every message being delivered twice', async () => {
    const world = await payrollWorld(EMPLOYEES);
    const accepted = await submit(world);
    const sendAll = world.services.queue.sendAll.bind(world.services.queue);
    const send = world.services.queue.send.bind(world.services.queue);
    world.services.queue.sendAll = async (m) => {
      await sendAll(m);
      await sendAll(m);
    };
    world.services.queue.send = async (m) => {
      await send(m);
      await send(m);
    };
    await send({ kind: 'start', organization_id: world.org.organization_id, payroll_id: accepted.data.payroll_id });
    await drain(world.services, world.queues.payroll, world.org.organization_id, accepted.data.payroll_id);
    await expectExactlyOnce(world, accepted.data.payroll_id);
  });

  it('rejects a run whose compliance checks fail, with its findings, and writes nothing', async () => {
    const world = await payrollWorld(3);
    const body = payrollBody(world.employeeIds);
    (body.employees[1] as Record<string, unknown>).notes = 'simulate:reject';
    const accepted = await submit(world, body);
    await drain(world.services, world.queues.payroll, world.org.organization_id, accepted.data.payroll_id);
    const record = (await world.services.payrolls.get(world.org.organization_id, accepted.data.payroll_id))!;
    expect(record.status).toBe('rejected');
    expect(record.findings).toEqual([
      expect.objectContaining({ code: 'simulated_rejection', employee_id: world.employeeIds[1] }),
    ]);
    expect(await paystubsOf(world, accepted.data.payroll_id)).toHaveLength(0);
    expect(record.disbursement).toBeNull();
  });

  it('completes a run with a sandbox deposit to 000000000 as any other: the return is for the sandbox bank to send, never the processor', async () => {
    const world = await payrollWorld(3, {
      accountNumber: (i) => (i === 2 ? SIMULATED_RETURN_ACCOUNT : String(55_000_000 + i)),
    });
    const orgId = world.org.organization_id;
    const accepted = await submit(world);
    await drain(world.services, world.queues.payroll, orgId, accepted.data.payroll_id);
    // A finalize delivered again changes nothing either.
    await processMessage(world.services, {
      kind: 'finalize',
      organization_id: orgId,
      payroll_id: accepted.data.payroll_id,
    });
    const record = (await world.services.payrolls.get(orgId, accepted.data.payroll_id))!;
    expect(record.status).toBe('completed');
    expect(record.returns_count).toBe(0);
    const stubs = await paystubsOf(world, accepted.data.payroll_id);
    expect(stubs.map((s) => s.payment.status)).toEqual(['scheduled', 'scheduled', 'scheduled']);
    const employee = (await world.services.employees.get(orgId, world.employeeIds[2]!))!;
    expect(employee.bank_account).toMatchObject({ status: 'active' });
    const events = (await world.services.events.list(orgId, {}, 100)).items.map((e) => e.type);
    expect(events).not.toContain('payment.returned');
  });

  it('lets exactly one of 50 concurrent identical submissions through and names it to the others', async () => {
    const world = await payrollWorld(3);
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => submit(world)));
    const accepted = results.filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<
      Awaited<ReturnType<typeof submit>>
    >[];
    expect(accepted).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(49);
    for (const r of rejected) {
      expect(r.reason).toMatchObject({ kind: 'conflict', code: 'duplicate_payroll_window' });
      expect(r.reason.details[0].payroll_id).toBe(accepted[0]!.value.data.payroll_id);
    }
  });

  it('answers 100 concurrent submissions with one Idempotency-Key with one payroll and 100 identical answers', async () => {
    const world = await payrollWorld(3);
    const body = payrollBody(world.employeeIds);
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        submitPayroll(
          { ...world.services, chunkSize: CHUNK },
          { organizationId: world.org.organization_id, environment: 'sandbox' },
          body,
          { dryRun: false, idempotencyKey: 'concurrent-key' },
        ),
      ),
    );
    expect(results.every((r) => r.kind === 'accepted')).toBe(true);
    const answers = results.map((r) => JSON.stringify(r.data));
    expect(new Set(answers).size).toBe(1);
    expect(results.filter((r) => r.kind === 'accepted' && !r.replayed)).toHaveLength(1);
    const history = await world.services.payrolls.list(world.org.organization_id, {}, 100);
    expect(history.items).toHaveLength(1);
  });
});
