/**
 * `pnpm generate:client`: rewrites `src/generated/api.ts` from the OpenAPI
 * document the built API server serves (see `served-document.ts`). Builds the server first.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildServer, fetchServedDocument, GENERATED_FILE, REPO_ROOT, typesOf } from './served-document.js';

buildServer();
const text = await typesOf(await fetchServedDocument());
await writeFile(join(REPO_ROOT, GENERATED_FILE), text);
process.stdout.write(`wrote ${GENERATED_FILE} (${text.length} characters)\n`);
