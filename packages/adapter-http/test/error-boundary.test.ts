import { expect } from 'chai';
import { DependencyUnavailableError, type RateLimitStore } from '@svc/core';
import { expectProblem } from '../../../tools/test-support/http.js';
import { anInsert, anUpdate, apiKey, bearer, call, recordsPath, runPath, SECRETS, startApps, type RunningApps } from './support/harness.js';

const SQL = "INSERT INTO [dbo].[payroll] ([salary]) VALUES (@p0); -- Server=db.internal.example;User Id=svc_writer;Password=Hunter2-Secret!";
const PASSWORD = 'Hunter2-Secret!';
const REDIS_URL = 'redis://:S3cr3t-Redis-Pass@redis.internal.example:6379';

/** Every string that must never reach a client or a log line. */
const FORBIDDEN = [SQL, 'INSERT INTO', 'payroll', PASSWORD, 'db.internal.example', 'svc_writer', REDIS_URL, 'S3cr3t-Redis-Pass', ...Object.values(SECRETS)];

function expectNoneOf(text: string, where: string): void {
  for (const secret of FORBIDDEN) expect(text, `${where} contains ${secret}`).to.not.include(secret);
}

describe('adapter-http: error boundary', function () {
  let apps: RunningApps;
  before(async function () {
    const downStore: RateLimitStore = {
      chargeAll: () => Promise.reject(new DependencyUnavailableError('redis', { cause: new Error(`connect ECONNREFUSED ${REDIS_URL}`) })),
    };
    apps = await startApps({
      override: (w) => ({
        insertRecord: {
          execute: () => {
            const error = new Error(`Invalid column name 'salary'. ${SQL}`) as Error & { code: string };
            error.code = 'EREQUEST';
            return Promise.reject(error);
          },
        },
        // A throw that is not even an Error.
        updateRecord: { execute: () => Promise.reject(`${SQL}`) },
        startRun: { execute: () => Promise.reject(new DependencyUnavailableError('run_queue', { cause: new Error(REDIS_URL) })) },
        // The real GetRun, charged by a policy whose store is down (the overridden use
        // cases above never charge).
        rateLimits: w.coreWith({ rateLimitStore: downStore }).rateLimits,
      }),
    });
  });
  after(async function () {
    await apps.close();
  });

  it('answers 500 internal_error that holds none of the thrown message, with X-Request-Id', async function () {
    const answer = await call(apps.url, 'POST', recordsPath(), { headers: { ...apiKey(SECRETS.keyA), 'x-request-id': 'trace-500' }, json: anInsert() });
    const problem = expectProblem(answer, 500, 'internal_error');
    expect(answer.headers.get('x-request-id')).to.equal('trace-500');
    expect(problem.request_id).to.equal('trace-500');
    expect(problem.detail).to.include('trace-500');
    expectNoneOf(answer.text, '500 body');
    expectNoneOf(JSON.stringify([...answer.headers]), '500 headers');
    expect(answer.text).to.not.match(/EREQUEST|salary|at .*\.ts:\d+/);
  });

  it('answers 500 to a thrown non-Error too', async function () {
    const answer = await call(apps.url, 'PATCH', recordsPath(), { headers: bearer(SECRETS.keyA), json: anUpdate() });
    expectProblem(answer, 500, 'internal_error');
    expectNoneOf(answer.text, '500 body');
  });

  it('answers 503 service_unavailable with Retry-After to a DependencyUnavailableError', async function () {
    for (const answer of [
      await call(apps.url, 'POST', runPath(), { headers: bearer(SECRETS.tokenWrite), json: { message: 'x' } }),
      // The rate limiter's store is down (thrown from inside a real use case).
      await call(apps.url, 'GET', '/api/v1/runs/r1', { headers: apiKey(SECRETS.keyA2) }),
    ]) {
      expectProblem(answer, 503, 'service_unavailable');
      expect(answer.headers.get('retry-after')).to.match(/^\d+$/);
      expect(Number(answer.headers.get('retry-after'))).to.be.at.least(1);
      expect(answer.headers.get('x-request-id')).to.be.a('string');
      expectNoneOf(answer.text, '503 body');
    }
  });

  it('logs the failures with their request id, and no log line holds the message, SQL, a password or a credential', function () {
    const errors = apps.logger.lines.filter((l) => l.level === 'error');
    expect(errors.map((l) => l.fields['request_id'])).to.include('trace-500');
    const warns = apps.logger.lines.filter((l) => l.level === 'warn');
    expect(warns.map((l) => l.fields['dependency'])).to.include.members(['run_queue', 'redis']);
    const requests = apps.logger.lines.filter((l) => l.message === 'request').map((l) => l.fields['status']);
    expect(requests).to.include.members([500, 503]);
    expectNoneOf(apps.logger.text(), 'the log');
  });
});
