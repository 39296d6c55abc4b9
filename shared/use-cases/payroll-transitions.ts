import { METRIC_NAMES } from '../adapters/metric-names.js';
import { businessMetrics } from '../adapters/observability.js';
import type { NewEvent } from '../data/event-repository.js';
import type { TransactItems } from '../data/item.js';
import type { PayrollRecord, PayrollRepository } from '../data/payroll-repository.js';
import type { EventType } from '../domain/events.js';
import {
  type LifecycleCommand,
  type LifecycleEvent,
  PAYROLL_TRANSITIONS,
  type TransitionContext,
  type TransitionDeclaration,
} from '../domain/payroll-lifecycle.js';
import { dispatchQuietly, payrollEvent, type EventServices } from './events.js';

export interface TransitionServices extends EventServices {
  payrolls: PayrollRepository;
}

/**
 * What a change adds to the webhook events its lifecycle transition emits, by event type: `extra` is added to the
 * run's summary (the payroll event of the run as it will stand), `data` replaces the summary altogether, and an event
 * already built is written as it is. The types themselves come from the lifecycle declaration, never from here.
 */
export type EventDetail = { extra: Record<string, unknown> } | { data: Record<string, unknown> } | { built: NewEvent };

export interface StatusChange {
  details?: Partial<Record<EventType, EventDetail>>;
  /** Recorded in the status history. */
  reason?: string;
  /** Attributes set on the run in the same write. */
  set?: Record<string, unknown>;
  /** Other items of the same transaction, written before the events (the released window of a cancelled run). */
  alsoWrite?: TransactItems;
  /** When the change happens; by default the time once the events are built. */
  at?: string;
  /**
   * What the event's guard reads. The conditional write then expects only the sources the guard allows here, so a
   * status that changed since the caller read it cannot slip past the guard (a production cancel meeting a run
   * approved a moment before finds it `pending`, and does not cancel it).
   */
  context?: TransitionContext;
}

/**
 * Takes a lifecycle transition (shared/domain/payroll-lifecycle.ts): the events it declares are built, written with
 * the status change in one DynamoDB transaction conditioned on the run being in one of the event's source statuses,
 * then fanned out. False when the run could not move (another worker moved it, or it is already past): nothing is
 * written and nothing is sent.
 */
export async function transitionWithEvents(
  s: TransitionServices,
  record: PayrollRecord,
  event: LifecycleEvent,
  change: StatusChange = {},
): Promise<boolean> {
  const declared = PAYROLL_TRANSITIONS[event];
  const next: PayrollRecord = { ...record, status: declared.to };
  const events = declared.emits.map((type): NewEvent => {
    const detail = change.details?.[type];
    if (detail && 'built' in detail) return detail.built;
    const built = payrollEvent(s.deps, next, type, detail && 'extra' in detail ? detail.extra : undefined);
    return detail && 'data' in detail ? { ...built, data: detail.data } : built;
  });
  const at = change.at ?? s.deps.now().toISOString();
  const withdrawFile = (declared.commands as readonly LifecycleCommand[]).includes('withdraw_file');
  const { guard }: TransitionDeclaration = declared;
  const from = change.context ? declared.from.filter((f) => !guard?.(f, change.context!)) : declared.from;
  const fileId = record.disbursement?.file_id;
  const moved = await s.payrolls.transition(record, { to: declared.to, from, withdrawFile, fileId }, at, {
    reason: change.reason,
    set: change.set,
    alsoWrite: [...(change.alsoWrite ?? []), ...s.events.items(events)],
  });
  if (moved) {
    // At the write that moved the run, so a step run again (a message delivered twice) counts nothing.
    if (declared.to === 'completed') businessMetrics.count(METRIC_NAMES.payrollsCompleted);
    if (declared.to === 'failed') businessMetrics.count(METRIC_NAMES.payrollsFailed);
    await dispatchQuietly(s, events);
  }
  return moved;
}
