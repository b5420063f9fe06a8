import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleClientErrors, STATUS_BY_CODE } from '@svc/adapter-http';
import { RecordingLogger } from '@svc/core/testing';
import { rawExchange, type RawAnswer } from '../../../tools/test-support/raw-http.js';

const SECRET = 'svc-client-error-secret-000000000001';

/** Asserts a problem details answer of `code` whose `Connection` is `connection` (default: it closes); returns its body. */
function expectRawProblem(answer: RawAnswer | undefined, code: keyof typeof STATUS_BY_CODE, connection: 'close' | 'keep-alive' = 'close'): Record<string, unknown> {
  if (answer === undefined) throw new Error(`no answer (expected ${code})`);
  expect(answer.version).to.equal('HTTP/1.1');
  expect(answer.status, code).to.equal(STATUS_BY_CODE[code]);
  expect(answer.headers.get('content-type')).to.deep.equal(['application/problem+json']);
  expect(answer.headers.get('connection')).to.deep.equal([connection]);
  const body = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
  expect(body).to.include({ type: 'about:blank', status: STATUS_BY_CODE[code], code });
  expect(body['detail']).to.be.a('string').and.not.equal('');
  expect(body['title']).to.be.a('string');
  const requestId = answer.headers.get('x-request-id')?.[0];
  expect(requestId).to.match(/^[0-9a-f-]{36}$/u);
  expect(body['request_id']).to.equal(requestId);
  return body;
}

describe('adapter-http: requests the HTTP parser refuses (handleClientErrors)', function () {
  let server: Server;
  let port: number;
  let logger: RecordingLogger;

  before(async function () {
    logger = new RecordingLogger();
    // Short header timeout and check interval so that the 408 case takes a moment.
    // The handler reads the whole body before answering, as the Koa apps do, so that a
    // framing error in the body is found while no answer has begun.
    server = createServer({ headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 50 }, (req, res) => {
      req.on('error', () => undefined);
      req.resume();
      req.on('end', () => {
        res.setHeader('Content-Type', 'text/plain');
        // /slow answers later, so that a request pipelined behind it is read and
        // answered while this answer is still pending.
        // A Buffer body, as Koa sends some: Node then queues the head in front of
        // anything already buffered for this answer.
        if (req.url === '/slow') setTimeout(() => res.end(Buffer.from('ok')), 50);
        else res.end(Buffer.from('ok'));
      });
    });
    handleClientErrors(server, logger);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  after(async function () {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  const cases: readonly [string, string, keyof typeof STATUS_BY_CODE][] = [
    ['a malformed request line', 'GET /a b c HTTP/1.1\r\nHost: t\r\n\r\n', 'bad_request'],
    ['an unknown HTTP version', 'GET / HTTP/7.3\r\nHost: t\r\n\r\n', 'bad_request'],
    ['an invalid method', 'G@T / HTTP/1.1\r\nHost: t\r\n\r\n', 'bad_request'],
    ['a header over maxHeaderSize', `GET / HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 'request_header_fields_too_large'],
    ['a control character in a header name', 'GET / HTTP/1.1\r\nHost: t\r\nX-A\u0001b: v\r\n\r\n', 'invalid_header'],
    ['a Content-Length that is not a number', 'POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1x\r\n\r\nx', 'invalid_header'],
    ['two different Content-Lengths', 'POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx', 'invalid_header'],
    ['a chunk size that is not hex', 'POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n', 'bad_request'],
  ];
  for (const [name, request, code] of cases) {
    it(`answers ${STATUS_BY_CODE[code]} ${code} with problem details and X-Request-Id to ${name}`, async function () {
      const exchange = await rawExchange(port, request.replace('Host: t', `Host: t\r\nX-API-Key: ${SECRET}`), { timeoutMs: 5_000 });
      expect(exchange.reset, 'reset').to.equal(false);
      expect(exchange.malformed).to.equal(undefined);
      expect(exchange.answers).to.have.length(1);
      expectRawProblem(exchange.answers[0], code);
    });
  }

  it('answers 417 expectation_failed to an Expect other than 100-continue', async function () {
    const exchange = await rawExchange(port, 'POST / HTTP/1.1\r\nHost: t\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}', { timeoutMs: 5_000, expectAnswers: 1 });
    expectRawProblem(exchange.answers[0], 'expectation_failed', 'keep-alive');
  });

  it('keeps the connection after a 417 whose body was read: the requests pipelined after it are answered, no reset', async function () {
    const refused = 'PATCH /x HTTP/1.1\r\nHost: t\r\nExpect: foo=bar\r\nContent-Length: 2\r\n\r\n{}';
    const next = 'GET /livez HTTP/1.1\r\nHost: t\r\n\r\n';
    const exchange = await rawExchange(port, `${refused}${next}${next}`, { timeoutMs: 5_000, expectAnswers: 3 });
    expect(exchange.answers.map((a) => a.status)).to.deep.equal([417, 200, 200]);
    expect(exchange.answers[0]?.headers.get('connection')?.[0]).to.not.equal('close');
    expect(exchange.reset).to.equal(false);
  });

  it('leaves Expect: 100-continue to Node: 100 Continue, then the answer', async function () {
    const exchange = await rawExchange(port, 'POST / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}', { timeoutMs: 5_000, expectAnswers: 1 });
    expect(exchange.interim).to.equal(1);
    expect(exchange.answers[0]?.status).to.equal(200);
  });

  it('answers 405 method_not_allowed with Allow to CONNECT, which Node would drop without an answer', async function () {
    const exchange = await rawExchange(port, 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n', { timeoutMs: 5_000 });
    expectRawProblem(exchange.answers[0], 'method_not_allowed');
    expect(exchange.answers[0]?.headers.get('allow')).to.deep.equal(['GET, HEAD, POST, PATCH, PUT, DELETE, OPTIONS']);
  });

  it('answers the pipelined requests read before a broken one first, in order, then refuses it', async function () {
    const exchange = await rawExchange(port, 'GET /1 HTTP/1.1\r\nHost: t\r\n\r\nHEAD /2 HTTP/1.1\r\nHost: t\r\n\r\nG@T /3 HTTP/1.1\r\n\r\n', { timeoutMs: 5_000, methods: ['GET', 'HEAD', 'G@T'] });
    expect(exchange.reset).to.equal(false);
    expect(exchange.answers.map((a) => a.status)).to.deep.equal([200, 200, 400]);
    expect(exchange.answers[0]?.body.toString()).to.equal('ok');
    expectRawProblem(exchange.answers[2], 'bad_request');
  });

  it('never writes 100 Continue inside an earlier answer on a pipelined connection', async function () {
    const exchange = await rawExchange(port, 'GET /slow HTTP/1.1\r\nHost: t\r\n\r\nGET /2 HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n\r\n', { timeoutMs: 5_000, expectAnswers: 2 });
    expect(exchange.malformed).to.equal(undefined);
    expect(exchange.answers.map((a) => [a.status, a.body.toString()])).to.deep.equal([[200, 'ok'], [200, 'ok']]);
  });

  it('answers 408 request_timeout when the header section does not arrive within headersTimeout', async function () {
    const exchange = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: t\r\n', { timeoutMs: 5_000 });
    expect(exchange.reset).to.equal(false);
    expectRawProblem(exchange.answers[0], 'request_timeout');
  });

  it('logs one line per refusal with its request id and codes, never the request bytes', function () {
    const refusals = logger.lines.filter((l) => l.message.startsWith('request refused'));
    expect(refusals.length).to.be.at.least(cases.length + 2);
    for (const line of refusals) expect(line.fields['request_id']).to.be.a('string');
    const text = JSON.stringify(logger.lines);
    for (const leaked of [SECRET, 'X-API-Key', 'aaaaaaaa', 'HTTP/7.3', '/a b c']) expect(text).to.not.include(leaked);
  });
});
