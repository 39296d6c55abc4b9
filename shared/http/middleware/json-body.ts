import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { InvalidRequestError } from '../../domain/errors.js';
import { parseStrictJson } from '../../domain/strict-json.js';
import { headerOf, type ApiEvent } from './request-context.js';

/**
 * A request body must be a JSON object naming each key once; anything else is 400 invalid_request_body before the
 * handler runs (shared/domain/strict-json.ts reads it as written, and refuses nesting past 64 levels before
 * parsing). A route that also takes text gets a `text/plain` body as it is.
 */
export function jsonBody(options: { text?: boolean } = {}): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  return {
    before: ({ event }) => {
      if (event.body === null || event.body === undefined || event.body === '') return;
      const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
      if (options.text && /^text\/plain\b/i.test(headerOf(event, 'content-type') ?? '')) {
        event.textBody = text;
        return;
      }
      const reading = parseStrictJson(text);
      if (!reading.ok && reading.problem === 'duplicate_key')
        throw new InvalidRequestError([
          {
            field: reading.path === '' ? reading.key : `${reading.path}.${reading.key}`,
            code: 'duplicate_key',
            message: `The key "${reading.key}" appears more than once in the same object`,
          },
        ]);
      if (!reading.ok && reading.problem === 'too_deep')
        throw new InvalidRequestError([{ code: 'too_deep', message: `The body is ${reading.message.toLowerCase()}` }]);
      if (!reading.ok) throw new InvalidRequestError([{ code: 'invalid_json', message: 'The body is not valid JSON' }]);
      const parsed = reading.value;
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new InvalidRequestError([{ code: 'invalid_type', message: 'The body must be a JSON object' }]);
      }
      event.jsonBody = parsed;
    },
  };
}
