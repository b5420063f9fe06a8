import { domainError, err, type RecordWriter, type WriteError } from '@svc/core';
import { expect } from 'chai';
import { expectProblem, expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import { anInsert, anUpdate, apiKey, call, recordsPath, SECRETS, startApps, type RunningApps } from './support/harness.js';

/** A writer whose every write fails with `error`, as a database that cannot be reached. */
function failingWriter(error: WriteError): RecordWriter {
  return { insert: () => Promise.resolve(err(error)), update: () => Promise.resolve(err(error)) };
}

// docs/CONTRACT.md "Envelope and errors": the customer's database unreachable → 502
// connection_unavailable; not answering in time → 504 connection_timeout.
describe('database failures over HTTP (502 / 504)', function () {
  const cases = [
    { code: 'connection_unavailable', status: 502, detail: 'The database of this connection cannot be reached.' },
    { code: 'connection_timeout', status: 504, detail: 'The database of this connection did not answer in time.' },
  ] as const;

  for (const { code, status, detail } of cases) {
    describe(code, function () {
      let apps: RunningApps;
      before(async function () {
        const writer = failingWriter(domainError(code, detail));
        apps = await startApps({
          override: (w) => {
            const core = w.coreWith({ recordWriter: writer });
            return { insertRecord: core.insertRecord, updateRecord: core.updateRecord };
          },
        });
      });
      after(async function () {
        await apps.close();
      });

      it(`answers ${status} ${code} problem details with rate-limit headers, on insert and update`, async function () {
        const inserted = await call(apps.url, 'POST', recordsPath(), { headers: apiKey(SECRETS.keyA), json: anInsert() });
        expect(expectProblem(inserted, status, code).detail).to.equal(detail);
        expectRateLimitHeaders(inserted, true);
        const updated = await call(apps.url, 'PATCH', recordsPath(), { headers: apiKey(SECRETS.keyA), json: anUpdate() });
        expectProblem(updated, status, code);
        expectRateLimitHeaders(updated, true);
      });
    });
  }
});
