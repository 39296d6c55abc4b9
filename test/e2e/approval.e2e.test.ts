import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bankReturnFile } from '../support/bank-return-file.js';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { asReceived, typedClient, type TypedClient } from '../support/typed-client.js';

/**
 * Approval before money moves (CONTRACT §11), over HTTPS: a run accepted under `payroll_approval: required` waits
 * in `awaiting_approval`, moving nothing; another key approves it (dual control), unless something blocks it; it may
 * be cancelled instead, and of an approval and a cancel racing exactly one wins.
 */
const at = (id: string) => ({ params: { path: { id } } });
const RDFI = '011000015';
let stack: RunningStack;

interface Org {
  /** The admin key that submits. */
  submitter: TypedClient;
  /** Another admin key: the second person. */
  approver: TypedClient;
  token: string;
}

async function newOrg(name: string): Promise<Org> {
  const { token } = await stack.createOrganization(name);
  const submitter = typedClient(stack, token);
  const second = await submitter.POST('/v1/api-keys', { body: { name: 'approver', type: 'admin' } });
  const settings = await submitter.PATCH('/v1/settings', { body: { payroll_approval: 'required' } });
  expect(settings.data!.data.payroll_approval).toBe('required');
  return { submitter, approver: typedClient(stack, second.data!.data.token), token };
}

let seq = 0;
async function hire(org: Org, account = String(60_000_000 + seq)): Promise<string> {
  const n = seq++;
  const res = await org.submitter.POST('/v1/employees', {
    body: {
      first_name: 'Ap',
      last_name: `Prover ${n}`,
      email: `approval${n}@example.com`,
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2020-01-06',
      bank_account: { account_number: account, routing_number: RDFI, account_type: 'checking' },
    },
  });
  expect(res.response.status, asReceived(res.response).text).toBe(201);
  return res.data!.data.employee_id;
}

let period = 0;
function runBody(ids: string[]) {
  const start = new Date(Date.UTC(2025, 0, 6) + 14 * 86_400_000 * period++);
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  const end = new Date(start.getTime() + 13 * 86_400_000);
  return {
    pay_period_start: iso(start),
    pay_period_end: iso(end),
    pay_date: iso(new Date(end.getTime() + 5 * 86_400_000)),
    employees: ids.map((id) => ({ employee_id: id, gross_pay: 2000, hours_worked: 80 })),
  };
}

async function submit(org: Org, body: ReturnType<typeof runBody>) {
  const res = await org.submitter.POST('/v1/payroll', { body });
  expect(res.response.status, asReceived(res.response).text).toBe(202);
  return res.data!.data as { payroll_id: string; status: string; approve_by: string | null; release_by: string };
}

async function statusOf(org: Org, payrollId: string) {
  return (await org.submitter.GET('/v1/payroll/{id}', at(payrollId))).data!.data;
}

async function settled(org: Org, payrollId: string) {
  return vi.waitFor(
    async () => {
      const run = await statusOf(org, payrollId);
      if (run.status === 'pending' || run.status === 'processing') throw new Error(run.status);
      return run;
    },
    { timeout: 20_000, interval: 50 },
  );
}

beforeAll(async () => {
  stack = await startLocalStack();
});

afterAll(async () => {
  await stack?.stop();
});

describe('a run that requires approval', () => {
  it('waits moving nothing, is refused to its submitter, and runs once another key approves it', async () => {
    const org = await newOrg('Approval Co');
    const ids = [await hire(org), await hire(org)];
    const accepted = await submit(org, runBody(ids));
    expect(accepted.status).toBe('awaiting_approval');
    expect(Date.parse(accepted.approve_by!)).toBeGreaterThan(Date.parse(`${accepted.release_by}T00:00:00Z`));
    const waiting = await statusOf(org, accepted.payroll_id);
    expect(waiting).toMatchObject({ status: 'awaiting_approval', blockers: [], approved_by: null });
    // What each person will be paid, shown before any money moves.
    expect(waiting.net_pay_by_employee).toEqual(ids.map((id) => ({ employee_id: id, net_pay: 2000 })));
    expect(waiting.progress.done).toBe(0);
    // Nothing moved: no file, no paystub.
    const file = await org.submitter.GET('/v1/payroll/{id}/disbursement', {
      ...at(accepted.payroll_id),
      headers: { Accept: 'application/json' },
    });
    expect(file.response.status).toBe(404);
    const stubs = await org.submitter.GET('/v1/paystubs', { params: { query: { payroll_id: accepted.payroll_id } } });
    expect(stubs.data!.data.paystubs).toEqual([]);

    // Dual control: the key that submitted it may not approve it.
    const self = await org.submitter.POST('/v1/payroll/{id}/approve', at(accepted.payroll_id));
    expect(self.response.status).toBe(403);
    expect(self.error!.error).toMatchObject({
      code: 'approver_is_submitter',
      message: 'The approver must not be the submitter',
    });
    // A payroll submitter's key has no approve:payroll.
    const submitterKey = await org.submitter.POST('/v1/api-keys', { body: { name: 'sub', type: 'payroll-submitter' } });
    const bySubmitterKey = await typedClient(stack, submitterKey.data!.data.token).POST(
      '/v1/payroll/{id}/approve',
      at(accepted.payroll_id),
    );
    expect(bySubmitterKey.response.status).toBe(403);
    expect(bySubmitterKey.error!.error.code).toBe('insufficient_scope');

    const approved = await org.approver.POST('/v1/payroll/{id}/approve', at(accepted.payroll_id));
    expect(approved.response.status, asReceived(approved.response).text).toBe(200);
    expect(approved.data!.data.status).toBe('pending');
    const done = await settled(org, accepted.payroll_id);
    expect(done.status).toBe('completed');
    expect(done.net_pay_by_employee).toBeNull();
    expect(done.status_history.map((h) => h.status)).toEqual([
      'awaiting_approval',
      'pending',
      'processing',
      'completed',
    ]);
    expect(done.approved_by?.api_key_id).toMatch(/^key_/);
    expect(done.approved_by?.api_key_id).not.toBe(done.submitted_by?.api_key_id);
    const events = await org.submitter.GET('/v1/events', { params: { query: { type: 'payroll.approved' } } });
    // One approval: the person's; the checks passing later emit no second one.
    const approvals = events.data!.data.events.filter(
      (e) => (e.data as { payroll_id?: string }).payroll_id === accepted.payroll_id,
    );
    expect(approvals).toHaveLength(1);
    const approvedEvent = approvals[0]!;
    expect(approvedEvent.data).toMatchObject({ approved_by: { api_key_id: done.approved_by!.api_key_id } });

    const again = await org.approver.POST('/v1/payroll/{id}/approve', at(accepted.payroll_id));
    expect(again.response.status).toBe(409);
    expect(again.error!.error.code).toBe('payroll_not_awaiting_approval');
  });

  it('lists what blocks it (an employee removed, an account returned R03) and refuses to approve it until cleared', async () => {
    const org = await newOrg('Blocked Co');
    const stays = await hire(org);
    const leaves = await hire(org);
    const returned = await hire(org);
    // An earlier run, approved, pays `returned`; its deposit comes back R03 once the next run awaits approval.
    const first = await submit(org, runBody([returned]));
    expect((await org.approver.POST('/v1/payroll/{id}/approve', at(first.payroll_id))).response.status).toBe(200);
    await settled(org, first.payroll_id);
    const stub = (await org.submitter.GET('/v1/paystubs', { params: { query: { payroll_id: first.payroll_id } } }))
      .data!.data.paystubs[0]!;

    const next = await submit(org, runBody([stays, leaves, returned]));
    expect((await statusOf(org, next.payroll_id)).blockers).toEqual([]);
    expect((await org.submitter.DELETE('/v1/employees/{id}', at(leaves))).response.status).toBe(200);
    const settings = (await org.submitter.GET('/v1/settings')).data!.data;
    const file = bankReturnFile(
      {
        odfiRouting: settings.originator.immediate_destination.trim(),
        rdfiRouting: RDFI,
        companyName: 'APPROVAL E2E',
        companyIdentification: settings.originator.company_identification,
      },
      {
        returns: [
          {
            originalTrace: stub.payment.trace_number!,
            code: 'R03',
            amountCents: Math.round(stub.net_pay * 100),
            routing: RDFI,
            account: String(60_000_000 + seq - 1),
            individualId: returned.slice(-15),
          },
        ],
      },
    );
    const posted = await org.submitter.POST('/v1/disbursement-returns', {
      body: file as never,
      bodySerializer: (text: unknown) => text as string,
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(posted.data!.data.outcomes[0]!.outcome).toBe('applied');

    const blocked = await statusOf(org, next.payroll_id);
    expect(blocked.blockers).toEqual([
      expect.objectContaining({ code: 'employee_not_found', employee_id: leaves }),
      expect.objectContaining({ code: 'missing_bank_account', employee_id: returned }),
    ]);
    const refused = await org.approver.POST('/v1/payroll/{id}/approve', at(next.payroll_id));
    expect(refused.response.status).toBe(422);
    expect(refused.error!.error.code).toBe('payroll_blocked');
    expect(refused.error!.error.details.map((d) => [d.code, d.employee_id])).toEqual([
      ['employee_not_found', leaves],
      ['missing_bank_account', returned],
    ]);
    expect((await statusOf(org, next.payroll_id)).status).toBe('awaiting_approval');
  });

  it('may be cancelled: it moved nothing, and its window is free again', async () => {
    const org = await newOrg('Cancel Co');
    const ids = [await hire(org)];
    const body = runBody(ids);
    const accepted = await submit(org, body);
    const cancelled = await org.submitter.POST('/v1/payroll/{id}/cancel', at(accepted.payroll_id));
    expect(cancelled.response.status).toBe(200);
    expect(cancelled.data!.data.status).toBe('cancelled');
    expect((await org.approver.POST('/v1/payroll/{id}/approve', at(accepted.payroll_id))).response.status).toBe(409);
    expect((await submit(org, body)).status).toBe('awaiting_approval');
  });

  it('gives exactly one of an approval and a cancel racing the win, and moves no money for a cancelled run', async () => {
    const org = await newOrg('Race Co');
    const ids = [await hire(org), await hire(org)];
    const runs = await Promise.all(Array.from({ length: 6 }, () => submit(org, runBody(ids))));
    const outcomes = await Promise.all(
      runs.map(async ({ payroll_id }) => {
        const [approve, cancel] = await Promise.all([
          org.approver.POST('/v1/payroll/{id}/approve', at(payroll_id)),
          org.submitter.POST('/v1/payroll/{id}/cancel', at(payroll_id)),
        ]);
        return { payroll_id, approve: approve.response.status, cancel: cancel.response.status };
      }),
    );
    for (const o of outcomes) {
      const run = await settled(org, o.payroll_id);
      const stubs = (await org.submitter.GET('/v1/paystubs', { params: { query: { payroll_id: o.payroll_id } } })).data!
        .data.paystubs;
      if (o.approve === 200 && o.cancel === 409) {
        expect(run.status).toBe('completed');
        expect(stubs).toHaveLength(ids.length);
      } else if (o.approve === 200 && o.cancel === 200) {
        // Approved first, then cancelled in the sandbox while pending or later: the cancel wins what is left.
        expect(run.status).toBe('cancelled');
        expect(stubs.every((s) => s.status === 'voided')).toBe(true);
      } else {
        expect([o.approve, o.cancel]).toEqual([409, 200]);
        expect(run.status).toBe('cancelled');
        expect(run.status_history.map((h) => h.status)).toEqual(['awaiting_approval', 'cancelled']);
        expect(stubs).toEqual([]);
      }
    }
  });
});
