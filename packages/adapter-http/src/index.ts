/**
 * `@svc/adapter-http`: the Koa HTTP adapter of the svc core: the main app, the egress
 * app (both built from the route list of `routes/`), problem details, rate-limit and
 * deprecation headers, and the OpenAPI 3.1 document.
 */
export * from './app.js';
export * from './admin-app.js';
export { clientAddressResolver, compileTrustedProxies, type ClientAddress, type ClientAddressResolver } from './pipeline/client-address.js';
export { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from './pipeline/cors.js';
export { ADAPTER_HTTP_TRACER_NAME, UNMATCHED_OPERATION } from './pipeline/observe-request.js';
export * from './settings.js';
export * from './route.js';
export { ROUTES } from './routes/index.js';
export * from './problem.js';
export * from './rate-limit-headers.js';
export * from './pipeline/deprecation.js';
export * from './openapi/document.js';
export type { Json, JsonObject } from './openapi/components.js';
export type { FixedAnswer } from './pipeline/fixed-answer.js';
export * from './llms-txt.js';
export * from './docs-site.js';
export * from './client-errors.js';
