import type { EventType } from './events.js';

/**
 * The payroll run's lifecycle, declared once: its states, the events that move a run between them, the guard each
 * event has, the webhook events each transition emits and the commands it asks its executor to carry out. It is pure
 * (no I/O): the submit, approve and cancel use cases and the processor execute what it answers. The documented
 * status enum, the conditional writes' expected statuses, the events written with each change, the console's status
 * labels and the diagram in docs/payroll.md are all read from here.
 *
 * A typed table rather than a state-machine library: the table is the whole of it (no hierarchy, no timers, no
 * actors), every consumer reads it directly (OpenAPI, DynamoDB conditions, the console), and it costs nothing at a
 * function's cold start.
 */

export interface StateDeclaration {
  /** What the console shows. */
  label: string;
  /** The run's work is over: it moves no further, but for the sandbox's cancel of a completed run. */
  terminal: boolean;
  /** A worker owes the run progress: it is indexed for the sweeper, which re-drives a run left here too long. */
  inFlight: boolean;
  description: string;
}

export const PAYROLL_STATES = {
  awaiting_approval: {
    label: 'Awaiting approval',
    terminal: false,
    inFlight: false,
    description: 'Accepted, window reserved; moves no money until a second person approves it',
  },
  pending: {
    label: 'Pending',
    terminal: false,
    inFlight: true,
    description: 'Approved (or accepted automatically): queued',
  },
  processing: {
    label: 'Processing',
    terminal: false,
    inFlight: true,
    description: 'Paystubs and the NACHA file being written',
  },
  completed: {
    label: 'Processed',
    terminal: true,
    inFlight: false,
    description: 'Paystubs issued and the NACHA file ready',
  },
  rejected: {
    label: 'Rejected',
    terminal: true,
    inFlight: false,
    description: 'A compliance check failed: nothing was paid',
  },
  failed: {
    label: 'Failed',
    terminal: true,
    inFlight: false,
    description: 'Processing failed: paystubs voided, file withdrawn',
  },
  cancelled: {
    label: 'Cancelled',
    terminal: true,
    inFlight: false,
    description: 'Cancelled: paystubs voided, file withdrawn',
  },
} as const satisfies Record<string, StateDeclaration>;

export type PayrollStatus = keyof typeof PAYROLL_STATES;
export const PAYROLL_STATUSES = Object.keys(PAYROLL_STATES) as [PayrollStatus, ...PayrollStatus[]];

/** What an executor does when a transition is taken, beyond writing the status and the events. */
export type LifecycleCommand =
  | 'enqueue_start'
  | 'plan_chunks'
  | 'write_file'
  | 'release_window'
  | 'withdraw_file'
  | 'void_paystubs';

/** What a guard may look at. */
export interface TransitionContext {
  environment: 'sandbox' | 'production';
}

export interface TransitionDeclaration {
  /** The statuses the event moves a run from; none for the events that create a run. */
  from: readonly PayrollStatus[];
  to: PayrollStatus;
  emits: readonly EventType[];
  commands: readonly LifecycleCommand[];
  /** Why the transition is refused from `from` in this context, or undefined when it is allowed. */
  guard?: (from: PayrollStatus, context: TransitionContext) => string | undefined;
  description: string;
}

export const PAYROLL_TRANSITIONS = {
  submit: {
    from: [],
    to: 'pending',
    emits: ['payroll.submitted'],
    commands: ['enqueue_start'],
    description: 'accepted, approval automatic',
  },
  submit_for_approval: {
    from: [],
    to: 'awaiting_approval',
    emits: ['payroll.submitted'],
    commands: [],
    description: 'accepted, approval required',
  },
  approve: {
    from: ['awaiting_approval'],
    to: 'pending',
    emits: ['payroll.approved'],
    commands: ['enqueue_start'],
    description: 'approved by another key than the submitter',
  },
  start: {
    from: ['pending'],
    to: 'processing',
    emits: ['payroll.processing'],
    // Planning a run approved automatically also writes its payroll.approved: under `automatic`, a run is approved
    // when its eligibility and compliance checks pass, as before approval could be required.
    commands: ['plan_chunks'],
    description: 'eligibility and compliance checked',
  },
  finish: {
    from: ['processing'],
    to: 'completed',
    emits: ['payroll.processed', 'payroll.completed', 'paystub.generated'],
    commands: ['write_file'],
    description: 'every chunk done, file written',
  },
  reject: {
    from: ['processing'],
    to: 'rejected',
    emits: ['payroll.rejected'],
    commands: [],
    description: 'a compliance check failed',
  },
  fail: {
    from: ['pending', 'processing'],
    to: 'failed',
    emits: ['payroll.failed'],
    commands: ['withdraw_file', 'void_paystubs'],
    description: 'processing failed',
  },
  cancel: {
    from: ['awaiting_approval', 'pending', 'processing', 'completed'],
    to: 'cancelled',
    emits: ['payroll.cancelled'],
    commands: ['release_window', 'withdraw_file', 'void_paystubs'],
    // A run awaiting approval moved nothing: it may be cancelled anywhere. Past approval, only in the sandbox.
    guard: (from, { environment }) =>
      from === 'awaiting_approval' || environment === 'sandbox' ? undefined : 'sandbox_only',
    description: 'cancelled (past approval: sandbox only)',
  },
} as const satisfies Record<string, TransitionDeclaration>;

export type LifecycleEvent = keyof typeof PAYROLL_TRANSITIONS;

export type TransitionOutcome =
  | { ok: true; to: PayrollStatus; emits: readonly EventType[]; commands: readonly LifecycleCommand[] }
  | { ok: false; reason: 'not_allowed_from' | string };

/** What `event` does to a run in `from`: the target, events and commands, or why it is refused. Pure. */
export function transition(
  from: PayrollStatus | null,
  event: LifecycleEvent,
  context: TransitionContext,
): TransitionOutcome {
  const declared: TransitionDeclaration = PAYROLL_TRANSITIONS[event];
  if (from === null ? declared.from.length > 0 : !declared.from.includes(from))
    return { ok: false, reason: 'not_allowed_from' };
  const refused = from === null ? undefined : declared.guard?.(from, context);
  if (refused) return { ok: false, reason: refused };
  return { ok: true, to: declared.to, emits: declared.emits, commands: declared.commands };
}

/** The statuses `event` moves a run from: the condition of its conditional write. */
export function sourcesOfEvent(event: LifecycleEvent): readonly PayrollStatus[] {
  return PAYROLL_TRANSITIONS[event].from;
}

export function isTerminal(status: PayrollStatus): boolean {
  return PAYROLL_STATES[status].terminal;
}

/** Whether any event moves a run from `from` to `to`. */
export function canTransition(from: PayrollStatus, to: PayrollStatus): boolean {
  return Object.values(PAYROLL_TRANSITIONS).some((t: TransitionDeclaration) => t.to === to && t.from.includes(from));
}

/**
 * Whether `event` applies to a run in `status`: it is one of the event's source statuses. The event's guard, which
 * depends on the context (the cancel's environment), is not asked: the processor's events (start, finish, fail,
 * reject) have none.
 */
export function mayTake(status: PayrollStatus, event: LifecycleEvent): boolean {
  return sourcesOfEvent(event).includes(status);
}

/** Whether `status` is the one `event` moves a run to. */
export function reachedBy(status: PayrollStatus, event: LifecycleEvent): boolean {
  return PAYROLL_TRANSITIONS[event].to === status;
}

/**
 * Whether a run in `status` ended without paying: a terminal status reached by a transition that voids the run's
 * paystubs (failed, cancelled). A chunk that finds its run so voids whatever it wrote.
 */
export function endedWithoutPaying(status: PayrollStatus): boolean {
  return (
    isTerminal(status) &&
    Object.values(PAYROLL_TRANSITIONS).some(
      (t: TransitionDeclaration) =>
        t.to === status && (t.commands as readonly LifecycleCommand[]).includes('void_paystubs'),
    )
  );
}

/** The lifecycle as a Mermaid state diagram (docs/payroll.md shows it; a test keeps the two equal). */
export function lifecycleDiagram(): string {
  const lines = ['stateDiagram-v2'];
  for (const [event, t] of Object.entries(PAYROLL_TRANSITIONS) as [LifecycleEvent, TransitionDeclaration][]) {
    const sources = t.from.length === 0 ? ['[*]'] : t.from;
    for (const from of sources) lines.push(`    ${from} --> ${t.to}: ${event}`);
  }
  for (const [status, s] of Object.entries(PAYROLL_STATES)) if (s.terminal) lines.push(`    ${status} --> [*]`);
  return lines.join('\n');
}
