import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import { systemDeps } from '../../shared/adapters/clock.js';
import { newId } from '../../shared/adapters/ids.js';
import { ObjectStore, objectKeys } from '../../shared/adapters/object-store.js';
import { Queue } from '../../shared/adapters/queue.js';
import { batchPutAll } from '../../shared/data/batch.js';
import { EmployeeRepository, employeeItemOf } from '../../shared/data/employee-repository.js';
import { EventRepository } from '../../shared/data/event-repository.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import { WebhookRepository } from '../../shared/data/webhook-repository.js';
import { createOrganization } from '../../shared/use-cases/api-keys.js';
import { testEmployee } from '../support/seed.js';
import {
  PayrollRejectedError,
  submitPayroll,
  type StoredSubmission,
  type SubmitServices,
} from '../../shared/use-cases/submit-payroll.js';
import {
  createTestBucket,
  createTestQueues,
  createTestTable,
  testS3Client,
  testSqsClient,
} from '../support/engines.js';

/**
 * The submit path stores a run's body while it reads the run's employees, window and settings, and writes the
 * record (with its window and idempotency key) only once the body is stored. So a body write that fails leaves
 * nothing a retry would meet, a run refused after its body was stored leaves no body, and a record write whose
 * outcome is unknown keeps the body the processor's start step will read.
 */

const EMPLOYEES = 150;

async function world() {
  const [table, bucket, queues] = await Promise.all([
    createTestTable('submit-body'),
    createTestBucket(),
    createTestQueues(),
  ]);
  const organizations = new OrganizationRepository(table);
  const org = await createOrganization(organizations, systemDeps, { name: 'Body Co', environment: 'sandbox' });
  const orgId = org.organization_id;
  const employeeIds = Array.from({ length: EMPLOYEES }, () => newId('emp'));
  await batchPutAll(
    table,
    employeeIds.map((id, i) => employeeItemOf(testEmployee(orgId, id, i))),
  );
  const objects = new ObjectStore(testS3Client(), bucket);
  const services: SubmitServices = {
    payrolls: new PayrollRepository(table),
    employees: new EmployeeRepository(table),
    organizations,
    objects,
    queue: new Queue(testSqsClient(), queues.payroll),
    events: new EventRepository(table),
    webhooks: new WebhookRepository(table),
    webhookQueue: new Queue(testSqsClient(), queues.webhooks),
    deps: systemDeps,
    chunkSize: 100,
  };
  /** Every object stored under the organization's runs. */
  const storedKeys = async () => {
    const out = await testS3Client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `payrolls/${orgId}/` }));
    return (out.Contents ?? []).map((o) => o.Key!);
  };
  return { orgId, employeeIds, objects, services, storedKeys };
}

type World = Awaited<ReturnType<typeof world>>;

function body(employeeIds: readonly string[], extra: Record<string, unknown> = {}) {
  return {
    pay_period_start: '2026-11-01',
    pay_period_end: '2026-11-14',
    pay_date: '2026-11-20',
    employees: employeeIds.map((employee_id, i) => ({
      employee_id,
      gross_pay: (2000 + i).toFixed(2),
      hours_worked: 80,
      deductions: { taxes: 400 },
    })),
    ...extra,
  };
}

function submit(w: World, services: SubmitServices, b: Record<string, unknown>, idempotencyKey?: string) {
  return submitPayroll(services, { organizationId: w.orgId, environment: 'sandbox' }, b, {
    dryRun: false,
    idempotencyKey,
  });
}

/** What nobody must find after a submission that was not accepted: a run, its window, its idempotency key. */
async function expectNothingRecorded(w: World, idempotencyKey: string) {
  const { createHash } = await import('node:crypto');
  const keyHash = createHash('sha256').update(idempotencyKey).digest('hex');
  expect((await w.services.payrolls.list(w.orgId, {}, 10)).items).toEqual([]);
  expect(await w.services.payrolls.getWindow(w.orgId, '2026-11-01', '2026-11-14')).toBeUndefined();
  expect(await w.services.payrolls.getIdempotency(w.orgId, keyHash, new Date())).toBeUndefined();
}

describe('the submit path’s body write', () => {
  let w: World;
  beforeEach(async () => {
    w = await world();
  });

  it('is under way while the employees are read', async () => {
    let begun!: () => void;
    const bodyWriteBegun = new Promise<void>((resolve) => {
      begun = resolve;
    });
    const objects = Object.create(w.objects) as ObjectStore;
    objects.putJson = (key, value) => {
      begun();
      return w.objects.putJson(key, value);
    };
    const repository = w.services.employees as EmployeeRepository;
    let sawBodyWrite = false;
    /** Answers only once the body write has begun (or, had it not, after a while: then the test fails). */
    const afterBodyWrite = async <T>(read: () => Promise<T>): Promise<T> => {
      let timer: NodeJS.Timeout | undefined;
      sawBodyWrite = await Promise.race([
        bodyWriteBegun.then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), 5_000);
        }),
      ]);
      clearTimeout(timer);
      return read();
    };
    // Both readers, so the test fails on an order of steps, not on a missing method.
    const employees = {
      eligibility: (orgId: string, ids: readonly string[]) => afterBodyWrite(() => repository.eligibility(orgId, ids)),
      getMany: (orgId: string, ids: readonly string[]) => afterBodyWrite(() => repository.getMany(orgId, ids)),
    };
    const services: SubmitServices = { ...w.services, objects, employees };
    const outcome = await submit(w, services, body(w.employeeIds));
    expect(sawBodyWrite).toBe(true);
    expect(outcome.kind).toBe('accepted');
  });

  it('that fails leaves no run, window or idempotency key: the same request succeeds when retried', async () => {
    const failing = Object.create(w.objects) as ObjectStore;
    failing.putJson = () =>
      Promise.reject(Object.assign(new Error('We encountered an internal error'), { name: 'InternalError' }));
    const b = body(w.employeeIds);
    await expect(submit(w, { ...w.services, objects: failing }, b, 'retry-me')).rejects.toThrow(/internal error/);
    await expectNothingRecorded(w, 'retry-me');
    expect(await w.storedKeys()).toEqual([]);

    const retried = await submit(w, w.services, b, 'retry-me');
    if (retried.kind !== 'accepted') throw new Error('expected acceptance');
    expect(retried.replayed).toBe(false);
    // What the processor's start step reads (process-payroll.ts loadSubmission) is there for the run.
    const stored = await w.objects.getJson<StoredSubmission>(objectKeys.submission(w.orgId, retried.data.payroll_id));
    expect(stored?.employees.map((e) => e.employee_id)).toEqual(w.employeeIds);
    expect(await w.storedKeys()).toEqual([objectKeys.submission(w.orgId, retried.data.payroll_id)]);
  });

  it('is left unreferenced, never deleted, when the run is refused for its employees or its window', async () => {
    // No runtime role may delete an object (the bucket's NACHA files must survive a compromised function): a refused
    // run's body stays, pointed at by no run and no idempotency key, and holds no bank account data.
    const unknown = newId('emp');
    await expect(submit(w, w.services, body([...w.employeeIds, unknown]), 'refused')).rejects.toBeInstanceOf(
      PayrollRejectedError,
    );
    await expectNothingRecorded(w, 'refused');
    const refused = await w.storedKeys();
    expect(refused).toHaveLength(1);

    const first = await submit(w, w.services, body(w.employeeIds));
    if (first.kind !== 'accepted') throw new Error('expected acceptance');
    const clash = submit(w, w.services, body(w.employeeIds.slice(1)));
    await expect(clash).rejects.toMatchObject({ code: 'duplicate_payroll_window' });
    const runs = (await w.services.payrolls.list(w.orgId, {}, 10)).items.map((r) => r.payroll_id);
    expect(runs).toEqual([first.data.payroll_id]);
    expect(await w.storedKeys()).toHaveLength(3);
    expect(await w.storedKeys()).toContain(objectKeys.submission(w.orgId, first.data.payroll_id));
  });

  it('is kept when the record write fails without saying whether it happened: the run it may belong to has its body', async () => {
    const payrolls = Object.create(w.services.payrolls) as PayrollRepository;
    payrolls.create = async (...args) => {
      await w.services.payrolls.create(...args);
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    };
    await expect(submit(w, { ...w.services, payrolls }, body(w.employeeIds), 'lost-answer')).rejects.toThrow(
      'socket hang up',
    );
    const [run] = (await w.services.payrolls.list(w.orgId, {}, 10)).items;
    expect(run?.status).toBe('pending');
    const stored = await w.objects.getJson<StoredSubmission>(objectKeys.submission(w.orgId, run!.payroll_id));
    expect(stored?.payroll_id).toBe(run!.payroll_id);
    expect(stored?.employees).toHaveLength(EMPLOYEES);

    // The client's retry with its key is answered with that run, whose body it reads.
    const replay = await submit(w, w.services, body(w.employeeIds), 'lost-answer');
    expect(replay).toMatchObject({ kind: 'accepted', replayed: true, data: { payroll_id: run!.payroll_id } });
  });
});
