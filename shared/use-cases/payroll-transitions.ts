import { METRIC_NAMES } from '../adapters/metric-names.js';
import { businessMetrics } from '../adapters/observability.js';
import type { NewEvent } from '../data/event-repository.js';
import type { TransactItems } from '../data/item.js';
import type { PayrollRecord, PayrollRepository } from '../data/payroll-repository.js';
import type { EventType } from '../domain/events.js';
import type { PayrollStatus } from '../domain/payroll-status.js';
import { dispatchQuietly, payrollEvent, type EventServices } from './events.js';

export interface TransitionServices extends EventServices {
  payrolls: PayrollRepository;
}

/**
 * An event a status change writes, in the order given. A type (with `extra`, what the event adds to the run's
 * summary) is a payroll event of the run as it will stand (`{ ...record, status: to }`), built when the change is
 * made; `data` instead replaces the summary altogether. An event already built is written as it is.
 */
export type TransitionEvent =
  | { type: EventType; extra?: Record<string, unknown>; data?: never }
  | { type: EventType; data: Record<string, unknown>; extra?: never }
  | NewEvent;

export interface StatusChange {
  events: readonly TransitionEvent[];
  /** Recorded in the status history. */
  reason?: string;
  /** Attributes set on the run in the same write. */
  set?: Record<string, unknown>;
  /** Other items of the same transaction, written before the events (the released window of a cancelled run). */
  alsoWrite?: TransactItems;
  /** When the change happens; by default the time once the events are built. */
  at?: string;
}

/**
 * A payroll status change and its events: the events are built, written with the change in one DynamoDB
 * transaction (the run moves only from a status that may move to `to`), then fanned out. False when the run could
 * not move (another worker moved it, or it is already there): nothing is written and nothing is sent.
 */
export async function transitionWithEvents(
  s: TransitionServices,
  record: PayrollRecord,
  to: PayrollStatus,
  change: StatusChange,
): Promise<boolean> {
  const next: PayrollRecord = { ...record, status: to };
  const events = change.events.map((e): NewEvent => {
    if ('event_id' in e) return e;
    const event = payrollEvent(s.deps, next, e.type, e.extra);
    return e.data ? { ...event, data: e.data } : event;
  });
  const at = change.at ?? s.deps.now().toISOString();
  const moved = await s.payrolls.transition(record, to, at, {
    reason: change.reason,
    set: change.set,
    alsoWrite: [...(change.alsoWrite ?? []), ...s.events.items(events)],
  });
  if (moved) {
    // At the write that moved the run, so a step run again (a message delivered twice) counts nothing.
    if (to === 'completed') businessMetrics.count(METRIC_NAMES.payrollsCompleted);
    if (to === 'failed') businessMetrics.count(METRIC_NAMES.payrollsFailed);
    await dispatchQuietly(s, events);
  }
  return moved;
}
