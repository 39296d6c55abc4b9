/** Time and ids reach use cases through this, so tests can pin them. */
import { newId, type IdPrefix } from './ids.js';

export interface Deps {
  now(): Date;
  newId(prefix: IdPrefix): string;
}

export const systemDeps: Deps = {
  now: () => new Date(),
  newId,
};
