import { cachedAnswer } from '../pipeline/fixed-answer.js';
import { JSON_CONTENT_TYPE } from '../pipeline/problem-details.js';
import type { FixedRoute } from '../route.js';

/**
 * `GET /.well-known/oauth-protected-resource`: the OAuth 2.0 protected resource metadata
 * of RFC 9728 §3 (resource, scopes, bearer in the header only); cacheable.
 */
export const protectedResourceMetadataRoute: FixedRoute = {
  kind: 'fixed',
  operationId: 'protectedResourceMetadata',
  method: 'GET',
  paths: { main: ['/.well-known/oauth-protected-resource'] },
  answer: ({ settings, index, cacheMaxAgeSeconds }) =>
    cachedAnswer(
      JSON_CONTENT_TYPE,
      Buffer.from(
        JSON.stringify({
          resource: `${settings.baseUrl}/api/v1`,
          scopes_supported: index.authentication.methods[0]?.scopes_supported ?? [],
          bearer_methods_supported: ['header'],
          resource_name: index.name,
          resource_documentation: index.documentation_url,
        }),
      ),
      cacheMaxAgeSeconds,
    ),
};
