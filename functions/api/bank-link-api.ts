import { bankTransport } from '../../shared/adapters/bank-transport.js';
import { systemDeps } from '../../shared/adapters/clock.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { observeApi } from '../../shared/adapters/observability.js';
import { bankLinkRoutes } from '../../shared/api/bank-link.js';
import { BankLinkRepository } from '../../shared/data/bank-link-repository.js';
import { OrganizationRepository } from '../../shared/data/organization-repository.js';
import { apiRouter } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { gateOver } from '../../shared/http/gate.js';
import { listPage } from '../../shared/http/pagination.js';
import { testBankConnection } from '../../shared/use-cases/bank-link/test-connection.js';
import { loadSettings } from '../../shared/use-cases/settings.js';

const table = defaultTable();
const organizations = new OrganizationRepository(table);
const bankLinks = new BankLinkRepository(table);
const connectionTest = {
  organizations,
  // Unwraps the link's password or key, for the connection test's session alone.
  encryptor: fieldEncryptor('bank-account'),
  // The SSH client is loaded on the first test: the status and inbound-files routes never load it.
  connect: bankTransport(),
  deps: systemDeps,
};

/**
 * /v1/bank-link: the last pass's status, what it picked up, and the connection test. Its own function: the only API
 * role that unwraps a link's secret, and the SSH client it carries stays out of every other function's bundle.
 */
const router = apiRouter(
  bankLinkRoutes,
  {
    getBankLinkStatus: async ({ principal }) => {
      const [settings, status] = await Promise.all([
        loadSettings(organizations, principal.organizationId),
        bankLinks.status(principal.organizationId),
      ]);
      return ok({
        configured: !!settings.bank_link,
        state: status?.state ?? null,
        reason: status?.reason ?? null,
        checked_at: status?.checked_at ?? null,
      });
    },
    listInboundFiles: async ({ principal, query }) => {
      const orgId = principal.organizationId;
      const found = await listPage({ orgId, query: 'inbound-files' }, query.page_token, (start) =>
        bankLinks.listInbound(orgId, query.limit, start),
      );
      return ok({
        inbound_files: found.items.map((f) => ({
          name: f.name,
          sha256: f.sha256,
          size: f.size,
          kind: f.kind,
          picked_up_at: f.picked_up_at,
          file_id: f.file_id,
          outcome: f.outcome,
          items: f.items,
        })),
        next_page_token: found.next_page_token,
      });
    },
    testBankConnection: async ({ principal }) =>
      ok(await testBankConnection(connectionTest, principal.organizationId), 'Connection tested'),
  },
  { gate: gateOver(table) },
);

/** Traced, and its business metrics published as each request ends (shared/adapters/observability.ts). */
export const handler = observeApi(router);
