import { SERVICE_NAME } from './metric-names.js';
import { Logger } from '@aws-lambda-powertools/logger';

/** One structured JSON logger per container. Nothing secret is ever passed to it: see shared/http/redact.ts. */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME });
