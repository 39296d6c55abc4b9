import { apiHandler } from '../../shared/http/api-handler.js';
import { employeeServices } from '../../shared/http/employee-services.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { updateSettingsBody } from '../../shared/schemas/settings.js';
import { settingsView, updateSettings } from '../../shared/use-cases/settings.js';

// The employee services carry the bank-account encryptor: the funding account is encrypted like an employee's.
export const handler = apiHandler(routeById.updateSettings, { body: updateSettingsBody }, async ({ principal, body }) =>
  ok(
    settingsView(await updateSettings(employeeServices(), principal, body), principal.environment),
    'Settings updated',
  ),
);
