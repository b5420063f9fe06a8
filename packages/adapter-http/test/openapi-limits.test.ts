import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpApp } from '@svc/adapter-http';
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_RATE_LIMITS } from '@svc/core';
import { expect } from 'chai';
import { parse } from 'yaml';
import { expectProblem } from '../../../tools/test-support/http.js';
import { anInsert, apiKey, call, recordsPath, SECRETS, startApps, type RunningApps } from './support/harness.js';

type Obj = Record<string, unknown>;

const LIMITS = { credential: { limit: 7, windowSeconds: 11 }, agent: { limit: 3, windowSeconds: 13 } } as const;
const BODY_LIMIT_BYTES = 2048;

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

async function documentOf(url: string): Promise<Obj> {
  const answer = await call(url, 'GET', '/openapi.yaml');
  expect(answer.status).to.equal(200);
  return parse(answer.text) as Obj;
}

const responseText = (doc: Obj, name: string): string => String((((doc['components'] as Obj)['responses'] as Obj)[name] as Obj)['description']);
const infoText = (doc: Obj): string => String((doc['info'] as Obj)['description']);

describe('adapter-http: the OpenAPI document states the limits the server enforces', function () {
  let apps: RunningApps;
  let server: Server;
  let url: string;
  before(async function () {
    apps = await startApps({ limits: LIMITS, bodyLimitBytes: BODY_LIMIT_BYTES });
    // A second app on the same use cases: the document states the limits of their policy.
    server = createServer(createHttpApp(apps.world.useCases, apps.settings).callback());
    url = await listen(server);
  });
  after(async function () {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await apps.close();
  });

  it('names the configured credential and agent limits and body size, not the defaults', async function () {
    const doc = await documentOf(url);
    expect(doc['x-limits']).to.deep.equal({
      credential: { requests: 7, window_seconds: 11 },
      agent: { requests: 3, window_seconds: 13 },
      body_bytes: BODY_LIMIT_BYTES,
    });
    expect(infoText(doc)).to.include('7 requests / 11 s per credential').and.include('3 / 13 s per agent').and.include('at most 2 KiB (2048 bytes)');
    expect(responseText(doc, 'PayloadTooLarge')).to.include('over 2 KiB (2048 bytes)');
    expect(responseText(doc, 'TooManyRequests')).to.include('(3 / 13 s)');
    const run = ((doc['paths'] as Obj)['/api/v1/agents/{agent_id}/run'] as Obj)['post'] as Obj;
    expect(String(run['description'])).to.include('Limited to 3 requests per 13 seconds per agent');
    const text = JSON.stringify(doc);
    expect(text).to.not.include('1 MiB');
    expect(text).to.not.include(`${DEFAULT_RATE_LIMITS.agent.limit} / ${DEFAULT_RATE_LIMITS.agent.windowSeconds} s`);
  });

  it('llms.txt states the same limits', async function () {
    const text = (await call(url, 'GET', '/llms.txt')).text;
    expect(text).to.include('7 requests per 11 seconds per credential; 3 run starts per 13 seconds per agent');
    expect(text).to.include('JSON bodies up to 2 KiB.');
  });

  it('enforces the body size it states: one byte over it answers 413', async function () {
    const insert = JSON.stringify(anInsert());
    const padded = (size: number): string => JSON.stringify(anInsert({ values: { id: 9, note: 'x'.repeat(size - insert.length - 20) } })).padEnd(size, ' ');
    expect(padded(BODY_LIMIT_BYTES)).to.have.length(BODY_LIMIT_BYTES);
    const at = await call(url, 'POST', recordsPath(), { headers: { ...apiKey(SECRETS.keyA2), 'content-type': 'application/json' }, raw: padded(BODY_LIMIT_BYTES) });
    expect(at.status, at.text).to.not.equal(413);
    const over = await call(url, 'POST', recordsPath(), { headers: { ...apiKey(SECRETS.keyA2), 'content-type': 'application/json' }, raw: padded(BODY_LIMIT_BYTES + 1) });
    expectProblem(over, 413, 'payload_too_large');
  });

  it('with default settings states the core defaults', async function () {
    const defaults = await startApps();
    try {
      const doc = await documentOf(defaults.url);
      expect(doc['x-limits']).to.deep.equal({
        credential: { requests: DEFAULT_RATE_LIMITS.credential.limit, window_seconds: DEFAULT_RATE_LIMITS.credential.windowSeconds },
        agent: { requests: DEFAULT_RATE_LIMITS.agent.limit, window_seconds: DEFAULT_RATE_LIMITS.agent.windowSeconds },
        body_bytes: DEFAULT_BODY_LIMIT_BYTES,
      });
    } finally {
      await defaults.close();
    }
  });
});
