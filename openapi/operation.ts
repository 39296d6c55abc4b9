import type { z } from 'zod';
import type { RouteId } from '../shared/http/routes.js';

/** The statuses an operation may answer beyond those derived from its route (auth, scope, rate limit, 500). */
export type DocumentedError = 400 | 403 | 404 | 409 | 413 | 422;

export interface SuccessResponse {
  status: 200 | 201 | 202;
  description: string;
  /** The `data` of the envelope, or the whole body when `raw`. */
  schema?: z.ZodType;
  /** The component name of the enveloped answer (`EmployeeResponse`). */
  envelope?: string;
  message?: string;
  example: unknown;
  /** Other representations of the same answer (a PDF, a NACHA file), chosen with `Accept`. */
  alternatives?: Record<
    string,
    { description: string; schema?: { type: 'string'; format?: string }; example?: string }
  >;
  /** `Location` of the created resource. */
  location?: boolean;
  /** Extra response headers, by name: description and whether it is always sent. */
  headers?: Record<string, { description: string; required: boolean }>;
  /** A body that is not the JSON envelope: its media type. */
  raw?: string;
}

export interface OperationSpec {
  tag: string;
  description: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: {
    schema: z.ZodType;
    example: unknown;
    required?: boolean;
    description?: string;
    examples?: Record<string, { summary: string; value: unknown }>;
  };
  success: readonly SuccessResponse[];
  /** When each documented error happens on this route (the codes are in the status's error schema). */
  errors?: Partial<Record<DocumentedError, string>>;
}

export type Operations = Partial<Record<RouteId, OperationSpec>>;
