import { routes } from './route.js';

/** What `GET /v1` answers besides its request id: the links a newcomer needs first. */
export const API_INDEX = {
  name: 'Payroll API',
  version: 'v1',
  links: {
    reference: '/docs',
    openapi: '/v1/openapi.json',
    console: '/dashboard/',
  },
};

const API_INDEX_EXAMPLE = {
  status: 200,
  message: 'OK',
  data: API_INDEX,
  request_id: '6f1c2c1e-5d0a-4d39-9f6e-1b9a4a3c2d10',
};

/** The routes that describe the API itself: no token, outside the rate limits. */
export const docsRoutes = routes('docs', {
  getIndex: {
    method: 'GET',
    path: '/v1',
    scope: null,
    bucket: null,
    summary: 'Where to start: the reference, the OpenAPI document and the console',
    access: [],
    tag: 'Reference',
    description:
      'A small index of the API in the usual envelope: links to the API reference page, this OpenAPI document and the operator console. No token needed.',
    success: [
      {
        status: 200,
        description: 'The index',
        raw: 'application/json',
        example: API_INDEX_EXAMPLE,
      },
    ],
  },
  getOpenApi: {
    method: 'GET',
    path: '/v1/openapi.json',
    scope: null,
    bucket: null,
    summary: "This API's OpenAPI 3.1 document",
    access: [],
    files: ['docs/openapi.json'],
    tag: 'Reference',
    description: 'This document (OpenAPI 3.1), as JSON. No token needed.',
    success: [
      {
        status: 200,
        description: 'The OpenAPI document',
        raw: 'application/json',
        example: { openapi: '3.1.0', info: { title: 'Payroll API', version: '0.1.0' }, paths: {} },
        headers: { 'Cache-Control': { description: 'The document may be cached for 5 minutes', required: true } },
      },
    ],
  },
  getApiReference: {
    method: 'GET',
    path: '/docs',
    scope: null,
    bucket: null,
    summary: 'The API reference page',
    access: [],
    files: ['docs/openapi.json'],
    tag: 'Reference',
    description:
      'The API reference: this document rendered as an HTML page (Redoc, served by the API itself, no CDN). No token needed.',
    success: [
      {
        status: 200,
        description: 'The reference page',
        raw: 'text/html',
        example: '<!doctype html><html lang="en"><head><title>Payroll API reference</title>…',
        headers: {
          'Cache-Control': { description: 'The page may be cached for 5 minutes', required: true },
          'Content-Security-Policy': {
            description: "Only the page's own scripts run, and nothing is loaded from elsewhere",
            required: true,
          },
        },
      },
    ],
  },
  getApiReferenceScript: {
    method: 'GET',
    path: '/docs/reference.js',
    scope: null,
    bucket: null,
    summary: 'The script the API reference page renders with',
    access: [],
    files: ['node_modules/redoc/bundles/redoc.standalone.js'],
    tag: 'Reference',
    description: 'The renderer the reference page loads (the Redoc standalone bundle).',
    success: [
      {
        status: 200,
        description: 'The script',
        raw: 'text/javascript',
        example: '/*! For license information please see redoc.standalone.js.LICENSE.txt */…',
        headers: { 'Cache-Control': { description: 'May be cached for a day', required: true } },
      },
    ],
  },
});
