import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { paystubServices } from '../../shared/http/paystub-services.js';
import { routeById } from '../../shared/http/routes.js';
import { paystubIdParams } from '../../shared/schemas/paystub.js';
import { getPaystub, paystubView } from '../../shared/use-cases/paystubs.js';

export const handler = apiHandler(routeById.getPaystub, { params: paystubIdParams }, async ({ principal, params }) => {
  const { stub, ytd } = await getPaystub(paystubServices(), principal.organizationId, params.id);
  return ok(paystubView(stub, ytd));
});
