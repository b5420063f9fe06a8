import type { RouteDefinition } from '../route.js';
import { describeApiRoute } from './describe-api.js';
import { docsHomeRoute, docsPageRoute } from './docs-site.js';
import { getAgentRoute } from './get-agent.js';
import { getConnectionRoute } from './get-connection.js';
import { getRunRoute } from './get-run.js';
import { cancelRunRoute } from './cancel-run.js';
import { completeFileRoute } from './complete-file.js';
import { deleteFileRoute } from './delete-file.js';
import { getFileRoute } from './get-file.js';
import { listFilesRoute } from './list-files.js';
import { prepareFileRoute } from './prepare-file.js';
import { uploadFileRoute } from './upload-file.js';
import { runEventsRoute } from './run-events.js';
import { insertRecordRoute } from './insert-record.js';
import { listAgentsRoute } from './list-agents.js';
import { listConnectionsRoute } from './list-connections.js';
import { listRunsRoute } from './list-runs.js';
import { livezRoute } from './livez.js';
import { llmsTxtRoute } from './llms-txt.js';
import { mcpEndpointRoute, mcpResourceMetadataRoute } from './mcp-endpoint.js';
import { openApiDocumentRoute } from './openapi-document.js';
import { protectedResourceMetadataRoute } from './protected-resource-metadata.js';
import { readyzRoute } from './readyz.js';
import { startRunRoute } from './start-run.js';
import { updateRecordRoute } from './update-record.js';

/**
 * Every route of the API, in document order: the operations (documented in the OpenAPI
 * document in this order), then the documents and health checks. Methods of one path are
 * listed in `Allow` in this order.
 */
export const ROUTES: readonly RouteDefinition[] = [
  describeApiRoute,
  insertRecordRoute,
  updateRecordRoute,
  startRunRoute,
  getRunRoute,
  cancelRunRoute,
  runEventsRoute,

  listAgentsRoute,
  getAgentRoute,
  listConnectionsRoute,
  getConnectionRoute,
  listRunsRoute,
  prepareFileRoute,
  uploadFileRoute,
  completeFileRoute,
  listFilesRoute,
  getFileRoute,
  deleteFileRoute,
  mcpEndpointRoute,
  mcpResourceMetadataRoute,
  openApiDocumentRoute,
  llmsTxtRoute,
  docsHomeRoute,
  docsPageRoute,
  protectedResourceMetadataRoute,
  livezRoute,
  readyzRoute,
];
