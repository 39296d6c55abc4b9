import { config } from '../../shared/config/env.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { processorServices } from '../../shared/http/processor-services.js';
import { routeById } from '../../shared/http/routes.js';
import { submitPayrollQuery } from '../../shared/schemas/payroll.js';
import { submitPayroll } from '../../shared/use-cases/submit-payroll.js';
import { InvalidRequestError } from '../../shared/domain/errors.js';

export const handler = apiHandler(
  routeById.submitPayroll,
  { body: 'raw', query: submitPayrollQuery },
  async ({ principal, body, query, header }) => {
    const idempotencyKey = header('idempotency-key');
    if (idempotencyKey !== undefined && (idempotencyKey.length < 1 || idempotencyKey.length > 255)) {
      throw new InvalidRequestError([
        { field: 'Idempotency-Key', code: 'invalid_format', message: 'An idempotency key is 1 to 255 characters' },
      ]);
    }
    const s = processorServices();
    const outcome = await submitPayroll(
      // Named, not spread: spreading would touch the encryptor, and this function has no KMS key.
      {
        payrolls: s.payrolls,
        employees: s.employees,
        organizations: s.organizations,
        objects: s.objects,
        queue: s.queue,
        deps: s.deps,
        chunkSize: config().PAYROLL_CHUNK_SIZE,
        events: s.events,
        webhooks: s.webhooks,
        webhookQueue: s.webhookQueue,
      },
      { organizationId: principal.organizationId, environment: principal.environment },
      body,
      { dryRun: query.dry_run, idempotencyKey },
    );
    if (outcome.kind === 'dry_run')
      return { status: 200, message: 'Dry run: the payroll is valid and nothing was stored', data: outcome.data };
    return {
      status: 202,
      message: 'Payroll accepted for processing',
      data: outcome.data,
      headers: {
        Location: `/v1/payroll/${outcome.data.payroll_id}`,
        ...(outcome.replayed && { 'Idempotent-Replayed': 'true' }),
      },
    };
  },
);
