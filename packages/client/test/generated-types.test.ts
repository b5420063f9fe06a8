import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildServer, fetchServedDocument, GENERATE_COMMAND, GENERATED_FILE, REPO_ROOT, typesOf } from '../scripts/served-document.js';

// The typed client cannot drift from the API: its types are regenerated here, in memory,
// from the document the built server serves, and must equal the checked-in file.
describe('@svc/client generated types', function () {
  // Builds examples/api-server when it is not fresh (a no-op after `pnpm test`'s tsc -b).
  this.timeout(240_000);

  it(`equal what openapi-typescript makes of the served document (else run ${GENERATE_COMMAND})`, async function () {
    buildServer();
    const expected = await typesOf(await fetchServedDocument());
    const actual = await readFile(join(REPO_ROOT, GENERATED_FILE), 'utf8');
    if (actual !== expected) {
      const a = actual.split('\n');
      const e = expected.split('\n');
      let line = 0;
      while (line < Math.max(a.length, e.length) && a[line] === e[line]) line += 1;
      expect.fail(
        `${GENERATED_FILE} differs from the types of the served OpenAPI document (first at line ${line + 1}: ` +
          `checked in ${JSON.stringify(a[line] ?? '<end of file>')}, served ${JSON.stringify(e[line] ?? '<end of file>')}). ` +
          `Run \`${GENERATE_COMMAND}\` and commit the file.`,
      );
    }
  });
});
