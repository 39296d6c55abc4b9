import { objectKeys } from '../../shared/adapters/object-store.js';
import { NotFoundError } from '../../shared/domain/errors.js';
import { centsToNumber } from '../../shared/domain/money.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { processorServices } from '../../shared/http/processor-services.js';
import { routeById } from '../../shared/http/routes.js';
import { payrollIdParams } from '../../shared/schemas/payroll.js';

/** The NACHA file as text/plain, or with `Accept: application/json` its control totals. 404 until it exists. */
export const handler = apiHandler(routeById.getDisbursement, { params: payrollIdParams }, async ({ principal, params, header }) => {
  const s = processorServices();
  const record = await s.payrolls.get(principal.organizationId, params.id);
  if (!record?.disbursement) throw new NotFoundError();
  if ((header('accept') ?? '').includes('application/json')) {
    const d = record.disbursement;
    return ok({
      payroll_id: record.payroll_id, entry_count: d.entry_count, entry_hash: d.entry_hash, total_credit: centsToNumber(d.total_credit),
      total_debit: centsToNumber(d.total_debit), batch_count: d.batch_count, block_count: d.block_count, created_at: d.created_at,
    });
  }
  const content = await s.objects.getText(objectKeys.disbursement(principal.organizationId, params.id));
  if (content === undefined) throw new NotFoundError();
  return {
    status: 200,
    message: 'OK',
    raw: { body: content, contentType: 'text/plain; charset=us-ascii' },
    headers: { 'Content-Disposition': `attachment; filename="${record.payroll_id}.ach"` },
  };
});
