import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { loadSettings, settingsView } from '../../shared/use-cases/settings.js';

export const handler = apiHandler(routeById.getSettings, {}, async ({ principal }) =>
  ok(settingsView(await loadSettings(appServices().organizations, principal.organizationId), principal.environment)),
);
