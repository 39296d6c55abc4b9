import { AuditRepository } from '../../shared/data/audit-repository.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { listPage } from '../../shared/http/pagination.js';
import { routeById } from '../../shared/http/routes.js';
import { listLogsQuery } from '../../shared/schemas/audit.js';
import { auditView, listAuditLog } from '../../shared/use-cases/audit.js';

let repository: AuditRepository | undefined;
const audit = () => (repository ??= new AuditRepository(appServices().table));

export const handler = apiHandler(routeById.listLogs, { query: listLogsQuery }, async ({ principal, query }) => {
  const orgId = principal.organizationId;
  const filters = {
    api_key_id: query.api_key_id,
    status: query.status,
    path_prefix: query.path_prefix,
    from: query.from,
    to: query.to,
  };
  const { deps } = appServices();
  const page = await listPage({ orgId, query: `logs:${JSON.stringify(filters)}` }, query.page_token, (start) =>
    listAuditLog(audit(), deps.now(), orgId, filters, query.limit, start),
  );
  return ok({ logs: page.items.map(auditView), next_page_token: page.next_page_token });
});
