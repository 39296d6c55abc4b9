import { GetObjectCommand, ListObjectsV2Command, type PutObjectCommandInput } from '@aws-sdk/client-s3';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../shared/data/keys.js';
import { describe, expect, it } from 'vitest';
import { localS3Client } from '../../local/engines/provision.js';
import { entryDetailRecord } from '../../shared/adapters/nacha.js';
import { FileSealer, fileContext } from '../../shared/adapters/file-sealer.js';
import { ObjectStore, WORK_FILE_PREFIX, objectKeys } from '../../shared/adapters/object-store.js';
import type { PaystubRecord } from '../../shared/data/paystub-repository.js';
import { SIMULATE_FAIL_NOTE } from '../../shared/adapters/sandbox-bank.js';
import { cancelPayroll } from '../../shared/use-cases/cancel-payroll.js';
import { failRun, processMessage, type ProcessorMessage } from '../../shared/use-cases/process-payroll.js';
import { updateSettings } from '../../shared/use-cases/settings.js';
import { testEngines } from '../support/engines.js';
import { drain, payrollBody, payrollWorld, paystubItemsOf, submitRun } from '../support/payroll-fixture.js';

/**
 * The security review's "plaintext account numbers at rest": no full account number may be stored in clear anywhere,
 * not even in the NACHA file of a completed run, which is sealed under a key of its own kept on the run's item. Real runs (one completed, one failed, one cancelled while its chunks were being
 * written) go through the processor on DynamoDB Local and fauxqs; then every object left in the bucket, every object
 * body ever written to it, and every item of the table are searched for each account number as plain digits.
 *
 * Every write is searched, not only what is left: the deployed bucket is versioned, so a file written and later
 * deleted stays a noncurrent version until the lifecycle expires it, and fauxqs keeps no versions to list.
 */
const EMPLOYEES = 25;
const CHUNK = 10;

/** Digits that occur nowhere else by chance (no amount, date, trace number or id holds them). */
const employeeAccount = (i: number) => `83${String(i).padStart(3, '0')}61974052`;
const FUNDING = { routing_number: '011000015', account_number: '5520749163381', account_type: 'checking' } as const;

interface Finding {
  where: string;
  number: string;
}

function findingsIn(where: string, text: string, numbers: readonly string[]): Finding[] {
  return numbers.filter((n) => text.includes(n)).map((number) => ({ where, number }));
}

async function recordingWorld() {
  const world = await payrollWorld(EMPLOYEES, { accountNumber: employeeAccount });
  const { s3Endpoint, region } = testEngines();
  const s3 = localS3Client(s3Endpoint, region);
  /** Every body put into the bucket, in order: what a versioned bucket keeps, deleted or not. */
  const writes: { key: string; body: string }[] = [];
  const puts: PutObjectCommandInput[] = [];
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'PutObjectCommand') {
        const input = args.input as PutObjectCommandInput;
        writes.push({ key: input.Key!, body: String(input.Body) });
        puts.push(input);
      }
      return next(args);
    },
    { step: 'initialize', name: 'recordWrites' },
  );
  world.services.objects = new ObjectStore(s3, world.bucket);
  await updateSettings(
    world.services,
    { organizationId: world.org.organization_id, environment: 'sandbox' },
    { funding_account: FUNDING },
  );
  return { ...world, s3, writes, puts };
}
type World = Awaited<ReturnType<typeof recordingWorld>>;

const submit = (world: World, body: ReturnType<typeof payrollBody>) => submitRun(world, body, CHUNK);

async function statusOf(world: World, payrollId: string) {
  return (await world.services.payrolls.get(world.org.organization_id, payrollId))!;
}

/** Every object still in the bucket, with its body. */
async function currentObjects(world: World): Promise<{ key: string; body: string }[]> {
  const out: { key: string; body: string }[] = [];
  let token: string | undefined;
  do {
    const page = await world.s3.send(new ListObjectsV2Command({ Bucket: world.bucket, ContinuationToken: token }));
    for (const { Key } of page.Contents ?? []) {
      const object = await world.s3.send(new GetObjectCommand({ Bucket: world.bucket, Key }));
      out.push({ key: Key!, body: await object.Body!.transformToString('utf8') });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

/** Every item of the table, raw (sets and binary included), as text. */
async function tableItems(world: World): Promise<{ key: string; text: string }[]> {
  const out: { key: string; text: string }[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await world.table.client.send(
      new ScanCommand({ TableName: world.table.tableName, ExclusiveStartKey: start as never }),
    );
    for (const item of page.Items ?? []) {
      const text = JSON.stringify(item, (_, v: unknown) =>
        v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
      );
      out.push({ key: `${item.PK?.S} ${item.SK?.S}`, text });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

async function paystubsOf(world: World, payrollId: string): Promise<PaystubRecord[]> {
  return paystubItemsOf(world.table, payrollId);
}

/** The credit entry records of a file (the offset debit to the checking funding account left out). */
const creditsOf = (file: string) => file.split('\n').filter((line) => line.startsWith('6') && !line.startsWith('627'));

/** The credit records the run's file must hold, built from its paystubs and the account numbers in clear. */
async function expectedCredits(world: World, payrollId: string, accounts: ReadonlyMap<string, string>) {
  const odfi = (await statusOf(world, payrollId)).originator!.originating_dfi_identification;
  return (await paystubsOf(world, payrollId))
    .sort((a, b) => a.payment.trace_number!.localeCompare(b.payment.trace_number!))
    .map((p) =>
      entryDetailRecord(odfi, {
        routingNumber: p.payment.routing_number,
        accountNumber: accounts.get(p.employee_id)!,
        accountType: p.payment.account_type,
        amountCents: p.net_pay,
        individualId: p.employee_id.slice(-15),
        individualName: p.employee_name,
        traceSequence: Number(p.payment.trace_number!.slice(8)),
      }),
    );
}

describe('bank account numbers at rest', () => {
  it('are stored in clear nowhere, the NACHA file of a completed run included, after completed, failed and cancelled runs', async () => {
    const world = await recordingWorld();
    const orgId = world.org.organization_id;
    const accounts = new Map(world.employeeIds.map((id, i) => [id, employeeAccount(i)]));
    const numbers = [...accounts.values(), FUNDING.account_number];

    // Completed.
    const completed = await submit(world, payrollBody(world.employeeIds));
    await drain(world.services, world.queues.payroll, orgId, completed);
    expect((await statusOf(world, completed)).status).toBe('completed');

    // Failed at finalize (the sandbox's simulate:fail), after every chunk wrote its entries.
    const failBody = payrollBody(world.employeeIds, { type: 'off_cycle', pay_date: '2026-11-23' });
    (failBody.employees[3] as Record<string, unknown>).notes = SIMULATE_FAIL_NOTE;
    const failed = await submit(world, failBody);
    await drain(world.services, world.queues.payroll, orgId, failed);
    expect((await statusOf(world, failed)).status).toBe('failed');

    // Cancelled through the API's use case as soon as one chunk has written its entries, the others in flight.
    const cancelled = await submit(
      world,
      payrollBody(world.employeeIds, { type: 'off_cycle', pay_date: '2026-11-24' }),
    );
    let cancelledAt: string | undefined;
    await drain(world.services, world.queues.payroll, orgId, cancelled, async (s, message) => {
      await processMessage(s, message);
      if (message.kind === 'chunk' && message.payroll_id === cancelled && !cancelledAt) {
        cancelledAt = (await statusOf(world, cancelled)).status;
        await cancelPayroll(world.services, 'sandbox', orgId, cancelled);
      }
    });
    expect(cancelledAt).toBe('processing');
    const cancelledRun = await statusOf(world, cancelled);
    expect(cancelledRun.status).toBe('cancelled');
    expect(world.writes.some((w) => w.key.includes(`/${cancelled}/entries/`))).toBe(true);

    // Every step delivered again once the runs ended: nothing of an ended run is done again, and nothing fails.
    for (const payrollId of [completed, failed, cancelled]) {
      for (const message of [
        { kind: 'finalize', organization_id: orgId, payroll_id: payrollId },
        { kind: 'chunk', organization_id: orgId, payroll_id: payrollId, chunk: 1 },
        { kind: 'start', organization_id: orgId, payroll_id: payrollId },
      ] satisfies ProcessorMessage[]) {
        await processMessage(world.services, message);
      }
    }
    await failRun(world.services, orgId, failed, 'delivered again');
    expect((await statusOf(world, completed)).status).toBe('completed');
    expect((await statusOf(world, failed)).status).toBe('failed');

    // The one place the numbers are: the completed run's file, sealed; opened with its key, byte for byte the records.
    const disbursementKey = objectKeys.disbursement(orgId, completed);
    const sealed = (await world.services.objects.getText(disbursementKey))!;
    expect(FileSealer.isSealed(sealed)).toBe(true);
    const file = await world.services.files.open(
      sealed,
      (await statusOf(world, completed)).file_key!,
      fileContext(orgId, completed),
    );
    expect(findingsIn(disbursementKey, file, numbers).map((f) => f.number)).toEqual(numbers);
    expect(creditsOf(file)).toEqual(await expectedCredits(world, completed, accounts));
    for (const payrollId of [failed, cancelled])
      expect(await world.services.objects.getText(objectKeys.disbursement(orgId, payrollId))).toBeUndefined();

    // Everything else: what the bucket holds now, every body ever written to it, every item of the table.
    const allowed = (_where: string) => false;
    const objects = await currentObjects(world);
    const items = await tableItems(world);
    const findings = [
      ...objects.flatMap((o) => findingsIn(`object ${o.key}`, o.body, numbers)),
      ...world.writes.flatMap((w) => findingsIn(`write ${w.key}`, w.body, numbers)),
      ...items.flatMap((i) => findingsIn(`item ${i.key}`, i.text, numbers)),
    ];
    const leaks = findings.filter((f) => !allowed(f.where));
    const workFilesLeft = objects.filter((o) => o.key.includes('/entries/')).map((o) => o.key);
    console.log(
      `bank data at rest: searched ${numbers.length} account numbers in ${objects.length} objects left in the bucket, ` +
        `${world.writes.length} object bodies written (every version), ${items.length} table items; ` +
        `${leaks.length} in clear; ${workFilesLeft.length} work files left for the lifecycle to expire`,
    );
    expect(leaks).toEqual([]);
    // Work files are not deleted (no runtime role may delete an object): they hold no account number, and all live
    // under the prefix the bucket's lifecycle expires.
    expect(workFilesLeft.length).toBeGreaterThanOrEqual(7);
    expect(workFilesLeft.filter((key) => !key.startsWith(WORK_FILE_PREFIX))).toEqual([]);
  });

  it("destroys a completed run's file when the run is cancelled: its key is erased, the sealed bytes stay unreadable", async () => {
    const world = await recordingWorld();
    const orgId = world.org.organization_id;
    const payrollId = await submit(world, payrollBody(world.employeeIds));
    await drain(world.services, world.queues.payroll, orgId, payrollId);
    const before = await statusOf(world, payrollId);
    expect(before.status).toBe('completed');
    expect(before.file_key).toEqual(expect.any(String));
    // A sandbox file carries no retention lock: a sandbox stage must stay removable.
    const put = world.puts.find((p) => p.Key === objectKeys.disbursement(orgId, payrollId))!;
    expect(put.ObjectLockMode).toBeUndefined();

    await cancelPayroll(world.services, 'sandbox', orgId, payrollId);
    const after = await statusOf(world, payrollId);
    expect(after.status).toBe('cancelled');
    expect(after.file_key).toBeNull();
    // The object is still there (nothing at run time may delete it), and no key left can open it.
    const sealed = (await world.services.objects.getText(objectKeys.disbursement(orgId, payrollId)))!;
    expect(FileSealer.isSealed(sealed)).toBe(true);
    await expect(
      world.services.files.open(sealed, (await world.services.files.newKey()).wrapped, fileContext(orgId, payrollId)),
    ).rejects.toThrow();
  });

  it("locks a production run's file for the organization's retention period, in governance mode", async () => {
    const world = await recordingWorld();
    const orgId = world.org.organization_id;
    const caller = { organizationId: orgId, environment: 'sandbox' as const };
    await updateSettings(world.services, caller, { file_retention_days: 1000 });
    const payrollId = await submit(world, payrollBody(world.employeeIds));
    // The run as a production organization's: only its environment decides the lock.
    await world.table.doc.send(
      new UpdateCommand({
        TableName: world.table.tableName,
        Key: keys.payroll(orgId, payrollId),
        UpdateExpression: 'SET environment = :production',
        ExpressionAttributeValues: { ':production': 'production' },
      }),
    );
    await drain(world.services, world.queues.payroll, orgId, payrollId);
    expect((await statusOf(world, payrollId)).status).toBe('completed');
    const put = world.puts.find((p) => p.Key === objectKeys.disbursement(orgId, payrollId))!;
    expect(put.ObjectLockMode).toBe('GOVERNANCE');
    const days = (Number(put.ObjectLockRetainUntilDate) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(999);
    expect(days).toBeLessThanOrEqual(1000);
  });
});
