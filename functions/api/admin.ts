import { systemDeps } from '../../shared/adapters/clock.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { observeApi } from '../../shared/adapters/observability.js';
import { apiKeyRoutes } from '../../shared/api/api-keys.js';
import { logRoutes } from '../../shared/api/logs.js';
import { settingsRoutes } from '../../shared/api/settings.js';
import { AuditRepository } from '../../shared/data/audit-repository.js';
import { BankLinkRepository } from '../../shared/data/bank-link-repository.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { apiRouter } from '../../shared/http/api-handler.js';
import { created, ok } from '../../shared/http/envelope.js';
import { gateOver } from '../../shared/http/gate.js';
import { listPage } from '../../shared/http/pagination.js';
import { apiKeyView, createApiKey, revokeApiKey, rotateApiKey } from '../../shared/use-cases/api-keys.js';
import { auditView, listAuditLog } from '../../shared/use-cases/audit.js';
import { loadSettings, settingsView, updateSettings } from '../../shared/use-cases/settings.js';

const table = defaultTable();
const gate = gateOver(table);
const { apiKeys } = gate;
const organizations = new OrganizationRepository(table);
const bankLinks = new BankLinkRepository(table);
const audit = new AuditRepository(table);
// The funding account is envelope-encrypted like an employee's bank account.
const encryptor = fieldEncryptor('bank-account');

/** The organization's administration: API keys, settings and the audit log. */
const router = apiRouter(
  { ...apiKeyRoutes, ...settingsRoutes, ...logRoutes },
  {
    createApiKey: async ({ principal, body }) => {
      const { record, token } = await createApiKey(
        apiKeys,
        systemDeps,
        principal.organizationId,
        principal.environment,
        body,
      );
      return created(
        { ...apiKeyView(record), token },
        `/v1/api-keys/${record.api_key_id}`,
        'API key created; the token is shown only once',
      );
    },
    listApiKeys: async ({ principal, query }) => {
      const orgId = principal.organizationId;
      const page = await listPage({ orgId, query: 'api-keys' }, query.page_token, (start) =>
        apiKeys.list(orgId, query.limit, start),
      );
      return ok({ api_keys: page.items.map(apiKeyView), next_page_token: page.next_page_token });
    },
    // The body is optional: an empty POST rotates with the default 24-hour grace period.
    rotateApiKey: async ({ principal, body, params }) => {
      const { record, token } = await rotateApiKey(
        apiKeys,
        systemDeps,
        principal.organizationId,
        params.id,
        body?.grace_period_seconds,
      );
      return ok({ ...apiKeyView(record), token }, 'API key rotated; the new token is shown only once');
    },
    revokeApiKey: async ({ principal, params }) => {
      const revoked = await revokeApiKey(apiKeys, systemDeps, principal.organizationId, params.id);
      return ok(apiKeyView(revoked), 'API key revoked');
    },
    getSettings: async ({ principal }) => {
      const [settings, holds] = await Promise.all([
        loadSettings(organizations, principal.organizationId),
        organizations.fundingHolds(principal.organizationId),
      ]);
      return ok(settingsView(settings, principal.environment, holds));
    },
    updateSettings: async ({ principal, body }) => {
      const settings = await updateSettings(
        {
          organizations,
          encryptor,
          deps: systemDeps,
          bankLinkStatus: { clear: (orgId) => bankLinks.clearStatus(orgId) },
        },
        principal,
        body,
      );
      const holds = await organizations.fundingHolds(principal.organizationId);
      return ok(settingsView(settings, principal.environment, holds), 'Settings updated');
    },
    listLogs: async ({ principal, query }) => {
      const orgId = principal.organizationId;
      const filters = {
        api_key_id: query.api_key_id,
        status: query.status,
        path_prefix: query.path_prefix,
        from: query.from,
        to: query.to,
      };
      const page = await listPage({ orgId, query: `logs:${JSON.stringify(filters)}` }, query.page_token, (start) =>
        listAuditLog(audit, systemDeps.now(), orgId, filters, query.limit, start),
      );
      return ok({ logs: page.items.map(auditView), next_page_token: page.next_page_token });
    },
  },
  { gate },
);

/** Traced, and its business metrics published as each request ends (shared/adapters/observability.ts). */
export const handler = observeApi(router);
