/**
 * `@svc/adapter-http`: the Koa HTTP adapter of the svc core: the main app, the egress
 * app, problem details, rate-limit and deprecation headers, and the OpenAPI 3.1 document.
 */
export * from './http-app.js';
export * from './problem.js';
export * from './rate-limit-headers.js';
export * from './deprecation.js';
export * from './openapi.js';
export * from './llms-txt.js';
export * from './client-errors.js';
