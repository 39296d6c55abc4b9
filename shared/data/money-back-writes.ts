import type { TableRef } from '../adapters/dynamo.js';
import type { TransactItems } from './item.js';
import { keys } from './keys.js';
import type { FundingHold } from './organization-repository.js';
import type { PaymentReturn, PaymentReversal, PaystubRecord } from './paystub-repository.js';
import type { FundingRecord, PayrollRecord } from './payroll-repository.js';

/**
 * The conditional writes money coming back makes (CONTRACT §12), on the entities it touches: a run's funding and
 * reversal tally, a payment's reversal, an organization's funding holds. Kept apart from those entities'
 * repositories so that only the functions that move money back carry them.
 */
export class MoneyBackWrites {
  constructor(private readonly table: TableRef) {}

  /**
   * The bank returned the run's outstanding funding debit (the offset, or the last re-debit: `redebit` is its index):
   * once, and only while that debit is the one outstanding.
   */
  fundingReturnItem(
    run: Pick<PayrollRecord, 'organization_id' | 'payroll_id'>,
    trace: string,
    returned: { code: string; reason: string; returned_at: string },
    redebit?: number,
  ): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.payroll(run.organization_id, run.payroll_id),
        UpdateExpression: `SET funding.#status = :returned, funding.#return = :return, funding.returned_traces = list_append(if_not_exists(funding.returned_traces, :none), :trace)${
          redebit === undefined ? '' : `, funding.redebits[${redebit}].#return = :return`
        }`,
        ConditionExpression: 'funding.outstanding_trace = :traceText AND funding.#status IN (:scheduled, :redebiting)',
        ExpressionAttributeNames: { '#status': 'status', '#return': 'return' },
        ExpressionAttributeValues: {
          ':returned': 'returned',
          ':return': returned,
          ':none': [],
          ':trace': [trace],
          ':traceText': trace,
          ':scheduled': 'scheduled',
          ':redebiting': 'redebit_scheduled',
        },
      },
    };
  }

  /** A re-debit of the returned funding: the `count`-th, only while the debit is returned and no other was written. */
  fundingRedebitItem(
    run: Pick<PayrollRecord, 'organization_id' | 'payroll_id'>,
    count: number,
    redebit: FundingRecord['redebits'][number],
  ): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.payroll(run.organization_id, run.payroll_id),
        UpdateExpression:
          'SET funding.#status = :redebiting, funding.redebits = list_append(funding.redebits, :redebit), funding.outstanding_trace = :trace, funding.outstanding_amount = :amount',
        // A completed run only: a cancelled one's file is withdrawn, and nothing is asked again for it.
        ConditionExpression: '#status = :completed AND funding.#status = :returned AND size(funding.redebits) = :count',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':completed': 'completed',
          ':redebiting': 'redebit_scheduled',
          ':redebit': [redebit],
          ':trace': redebit.trace_number,
          ':amount': redebit.amount,
          ':returned': 'returned',
          ':count': count,
        },
      },
    };
  }

  /** The organization paid the returned debit by other means. */
  fundingResolveItem(
    run: Pick<PayrollRecord, 'organization_id' | 'payroll_id'>,
    resolution: NonNullable<FundingRecord['resolution']>,
  ): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.payroll(run.organization_id, run.payroll_id),
        UpdateExpression: 'SET funding.#status = :resolved, funding.resolution = :resolution',
        ConditionExpression: 'funding.#status = :returned',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':resolved': 'resolved', ':resolution': resolution, ':returned': 'returned' },
      },
    };
  }

  /** Counts `count` reversed payments of `amount` cents in the run's `reversals`: only on a completed run. */
  reversalTallyItem(orgId: string, payrollId: string, count: number, amount: number): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.payroll(orgId, payrollId),
        UpdateExpression: 'ADD reversals_count :count, reversals_amount :amount',
        ConditionExpression: '#status = :completed',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':count': count, ':amount': amount, ':completed': 'completed' },
      },
    };
  }

  /**
   * Reverses the payment and voids its paystub, in the reversal's transaction: only a payment still `scheduled` with
   * this trace (not returned, not reversed already by a request that came first).
   */
  reversalItem(p: PaystubRecord, reversal: PaymentReversal): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.paystub(p.paystub_id),
        UpdateExpression: 'SET payment.#status = :reversing, payment.reversal = :reversal, #stub_status = :voided',
        ConditionExpression:
          'payment.trace_number = :trace AND payment.#status = :scheduled AND organization_id = :org',
        ExpressionAttributeNames: { '#status': 'status', '#stub_status': 'status' },
        ExpressionAttributeValues: {
          ':reversing': 'reversal_scheduled',
          ':scheduled': 'scheduled',
          ':voided': 'voided',
          ':reversal': reversal,
          ':trace': p.payment.trace_number,
          ':org': p.organization_id,
        },
      },
    };
  }

  /** The bank returned the reversal's debit: recorded once, on a payment still `reversal_scheduled`. */
  reversalReturnItem(p: PaystubRecord, returned: PaymentReturn): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.paystub(p.paystub_id),
        UpdateExpression: 'SET payment.#status = :returned, payment.reversal.#return = :return',
        ConditionExpression: 'payment.#status = :reversing AND attribute_not_exists(payment.reversal.#return)',
        ExpressionAttributeNames: { '#status': 'status', '#return': 'return' },
        ExpressionAttributeValues: {
          ':returned': 'reversal_returned',
          ':reversing': 'reversal_scheduled',
          ':return': returned,
        },
      },
    };
  }

  /** Puts the organization on hold for the run's returned debit (in the return's transaction). */
  fundingHoldItem(orgId: string, hold: FundingHold): TransactItems[number] {
    return {
      Put: {
        TableName: this.table.tableName,
        Item: { ...keys.fundingHold(orgId, hold.payroll_id), entity: 'funding_hold', ...hold },
      },
    };
  }

  /** Lifts the run's hold (in the transaction of its re-debit or its resolution). */
  fundingReleaseItem(orgId: string, payrollId: string): TransactItems[number] {
    return { Delete: { TableName: this.table.tableName, Key: keys.fundingHold(orgId, payrollId) } };
  }
}
