import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from './metric-names.js';

/**
 * The container's tracer, made by observability.ts only when tracing is on: this module, and the X-Ray SDK with it,
 * is imported then and only then (esbuild puts it in a chunk of the function's asset, loaded while the function's
 * module loads).
 *
 * Not `captureHTTPsRequests`: it would add X-Ray's trace header to every webhook POST to a customer's endpoint. The
 * AWS SDK's calls are traced through their clients (`traced`), the POST as a subsegment of its own (`traceCall`).
 */
export const createTracer = (): Tracer => new Tracer({ serviceName: SERVICE_NAME, captureHTTPsRequests: false });
