import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { updateSettingsBody } from '../../shared/schemas/settings.js';
import { settingsView, updateSettings } from '../../shared/use-cases/settings.js';

export const handler = apiHandler(routeById.updateSettings, { body: updateSettingsBody }, async ({ principal, body }) => {
  const { organizations, deps } = appServices();
  return ok(settingsView(await updateSettings(organizations, deps, principal.organizationId, body)), 'Settings updated');
});
