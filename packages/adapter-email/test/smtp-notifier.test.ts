import { createServer, type Server, type Socket } from 'node:net';
import { expect } from 'chai';
import type { Run, RunRequest } from '@svc/core';
import { aRun, eventually, InMemoryRuns, RecordingLogger } from '@svc/core/testing';
import { isTransientEmailError, runFinishedMessage, SmtpNotifier, type EmailOutcome, type SmtpSettings } from '@svc/adapter-email';
import { freePort } from '../../../tools/test-support/ports.js';
import { startSmtpServer, type TestSmtpServer } from '../../../tools/test-support/smtp-server.js';

const BASE_URL = 'https://api.example.test';
const ADDRESS = 'ops.person@customer.example';
const RUN_ID = '6f1c2a9e-5b7d-4e21-9c3a-0d8e6f4b2a11';
const USER = 'svc-mailer-user';
const PASSWORD = 'smtp-password-not-for-logs';

const withEmail = (email: string | undefined): RunRequest => ({
  kind: 'files',
  files: [{ file_key: 'uploads/a.pdf', file_name: 'a.pdf', content_type: 'application/pdf' }],
  processTogether: false,
  backgroundFiles: [],
  ...(email !== undefined ? { notificationEmail: email } : {}),
});

const finished = (overrides: Partial<Run> = {}): Run =>
  aRun({ runId: RUN_ID, agentId: 'agent_main', status: 'succeeded', attempts: 1, request: withEmail(ADDRESS), requestId: 'req-1', updatedAt: new Date('2026-01-01T00:00:05Z'), ...overrides });

function smtpOf(server: Pick<TestSmtpServer, 'host' | 'port'>, extra: Partial<SmtpSettings> = {}): SmtpSettings {
  return { host: server.host, port: server.port, secure: false, from: 'Agent runs <runs@svc.example>', timeoutMs: 2000, ...extra };
}

/** Every value a log line must never hold. */
function expectNoSecrets(logger: RecordingLogger, host: string): void {
  const text = logger.text();
  for (const value of [ADDRESS, USER, PASSWORD, host, 'customer.example']) expect(text, value).to.not.include(value);
}

describe('SmtpNotifier against a real SMTP server on loopback', function () {
  let smtp: TestSmtpServer | undefined;
  afterEach(async function () {
    await smtp?.close();
    smtp = undefined;
  });

  it('sends one message To the run address, From the configured one, naming run id, status, agent id and status_url; logs it without the address', async function () {
    smtp = await startSmtpServer();
    const logger = new RecordingLogger();
    const outcomes: EmailOutcome[] = [];
    await new SmtpNotifier({ smtp: smtpOf(smtp), baseUrl: BASE_URL, logger, onOutcome: (o) => outcomes.push(o) }).runFinished(finished());
    expect(smtp.messages).to.have.length(1);
    const [mail] = smtp.messages as [TestSmtpServer['messages'][number]];
    expect(mail.rcptTo).to.deep.equal([ADDRESS]);
    expect(mail.mailFrom).to.equal('runs@svc.example');
    expect(mail.headers.get('to')).to.equal(ADDRESS);
    expect(mail.headers.get('from')).to.equal('Agent runs <runs@svc.example>');
    expect(mail.headers.get('subject')).to.equal(`Run ${RUN_ID} succeeded`);
    expect(mail.headers.get('content-type')).to.match(/^text\/plain/u);
    expect(mail.text).to.include(`Run id: ${RUN_ID}`).and.include('Status: succeeded').and.include('Agent id: agent_main');
    expect(mail.text).to.include(`Status URL: ${BASE_URL}/api/v1/runs/${RUN_ID}`);
    expect(mail.text).to.not.include('Reason:');
    expect(outcomes).to.deep.equal(['sent']);
    expect(logger.lines).to.deep.equal([
      { level: 'info', fields: { run_id: RUN_ID, request_id: 'req-1', status: 'succeeded', channel: 'email', attempts: 1 }, message: 'run notification sent' },
    ]);
    expectNoSecrets(logger, smtp.host);
  });

  it('a failed run: the subject says failed and the text gives its reason', async function () {
    smtp = await startSmtpServer();
    await new SmtpNotifier({ smtp: smtpOf(smtp), baseUrl: BASE_URL }).runFinished(finished({ status: 'failed', failureReason: 'The file could not be read.' }));
    const [mail] = smtp.messages;
    expect(mail?.headers.get('subject')).to.equal(`Run ${RUN_ID} failed`);
    expect(mail?.text).to.include('Status: failed').and.include('Reason: The file could not be read.');
  });

  it('authenticates with the configured user and password', async function () {
    smtp = await startSmtpServer({ auth: { user: USER, password: PASSWORD } });
    const logger = new RecordingLogger();
    await new SmtpNotifier({ smtp: smtpOf(smtp, { user: USER, password: PASSWORD }), baseUrl: BASE_URL, logger }).runFinished(finished({ status: 'cancelled' }));
    expect(smtp.messages.map((m) => m.user)).to.deep.equal([USER]);
    expect(smtp.messages[0]?.headers.get('subject')).to.equal(`Run ${RUN_ID} cancelled`);
    expectNoSecrets(logger, smtp.host);
  });

  it('refused credentials (535): given up at once, warned with the error type and reply code only', async function () {
    smtp = await startSmtpServer({ auth: { user: USER, password: 'another-password' } });
    const logger = new RecordingLogger();
    const outcomes: EmailOutcome[] = [];
    await new SmtpNotifier({ smtp: smtpOf(smtp, { user: USER, password: PASSWORD }), baseUrl: BASE_URL, logger, onOutcome: (o) => outcomes.push(o) }).runFinished(finished());
    expect(smtp.messages).to.have.length(0);
    expect(outcomes).to.deep.equal(['failed']);
    expect(logger.lines).to.have.length(1);
    expect(logger.lines[0]).to.deep.include({ level: 'warn', message: 'run notification failed' });
    expect(logger.lines[0]?.fields).to.deep.equal({ run_id: RUN_ID, request_id: 'req-1', status: 'succeeded', channel: 'email', attempts: 1, error_type: 'Error:EAUTH', smtp_response_code: 535 });
    expectNoSecrets(logger, smtp.host);
  });

  it('a permanent rejection of the recipient (550): no retry; the reply text (which names the address) is never logged', async function () {
    smtp = await startSmtpServer({ rcptReply: (_n, address) => [550, `5.1.1 <${address}>: Recipient address rejected`] });
    const logger = new RecordingLogger();
    await new SmtpNotifier({ smtp: smtpOf(smtp), baseUrl: BASE_URL, logger, retry: { retries: 2, minDelayMs: 1 } }).runFinished(finished());
    expect(smtp.rcptCount).to.equal(1);
    expect(logger.at('warn')[0]?.fields).to.include({ attempts: 1, smtp_response_code: 550 });
    expectNoSecrets(logger, smtp.host);
  });

  it('a transient reply (451) is retried, and the message goes through on the second attempt', async function () {
    smtp = await startSmtpServer({ rcptReply: (n) => (n === 1 ? [451, '4.7.1 Try again later'] : undefined) });
    const logger = new RecordingLogger();
    const outcomes: EmailOutcome[] = [];
    await new SmtpNotifier({ smtp: smtpOf(smtp), baseUrl: BASE_URL, logger, retry: { retries: 2, minDelayMs: 10 }, onOutcome: (o) => outcomes.push(o) }).runFinished(finished());
    expect(smtp.messages).to.have.length(1);
    expect(outcomes).to.deep.equal(['sent']);
    expect(logger.lines.map((l) => [l.message, l.fields['attempts']])).to.deep.equal([['run notification sent', 2]]);
  });

  it('no server listening: every attempt refused, then one warn line without the address or host; never rejects', async function () {
    const port = await freePort();
    const logger = new RecordingLogger();
    const outcomes: EmailOutcome[] = [];
    const notifier = new SmtpNotifier({ smtp: smtpOf({ host: '127.0.0.1', port }, { user: USER, password: PASSWORD }), baseUrl: BASE_URL, logger, retry: { retries: 2, minDelayMs: 10 }, onOutcome: (o) => outcomes.push(o) });
    await notifier.runFinished(finished());
    expect(outcomes).to.deep.equal(['failed']);
    expect(logger.lines).to.have.length(1);
    expect(logger.lines[0]).to.deep.include({ level: 'warn', message: 'run notification failed' });
    expect(logger.lines[0]?.fields).to.deep.equal({ run_id: RUN_ID, request_id: 'req-1', status: 'succeeded', channel: 'email', attempts: 3, error_type: 'Error:ESOCKET' });
    expect(logger.text()).to.not.include(String(port));
    expectNoSecrets(logger, '127.0.0.1');
  });

  describe('a server that accepts the connection and never greets', function () {
    let silent: Server;
    const sockets = new Set<Socket>();
    beforeEach(async function () {
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    });
    afterEach(async function () {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it('gives up within the attempt bound (timeout_ms × attempts plus waits)', async function () {
      const { port } = silent.address() as { port: number };
      const logger = new RecordingLogger();
      const started = Date.now();
      await new SmtpNotifier({ smtp: smtpOf({ host: '127.0.0.1', port }, { timeoutMs: 200 }), baseUrl: BASE_URL, logger, retry: { retries: 1, minDelayMs: 10 } }).runFinished(finished());
      const elapsed = Date.now() - started;
      expect(elapsed, 'ms').to.be.at.least(380).and.below(1500);
      expect(logger.at('warn')[0]?.fields).to.include({ attempts: 2 });
      expect(logger.at('warn')[0]?.fields['error_type']).to.match(/^(Error:ETIMEDOUT|AbortError:EABORT)$/u);
    });
  });

  it('a run without an address (Option 2, or Option 1 without notification_email): nothing sent, logged or counted', async function () {
    smtp = await startSmtpServer();
    const logger = new RecordingLogger();
    const outcomes: EmailOutcome[] = [];
    const notifier = new SmtpNotifier({ smtp: smtpOf(smtp), baseUrl: BASE_URL, logger, onOutcome: (o) => outcomes.push(o) });
    await notifier.runFinished(finished({ request: { kind: 'message', message: 'hello' } }));
    await notifier.runFinished(finished({ request: withEmail(undefined) }));
    expect(smtp.messages).to.have.length(0);
    expect(logger.lines).to.have.length(0);
    expect(outcomes).to.have.length(0);
  });

  it('with the in-memory worker: the SMTP server down leaves the run succeeded, notified once', async function () {
    const runs = new InMemoryRuns();
    const logger = new RecordingLogger();
    const outcomes: EmailOutcome[] = [];
    const notifier = new SmtpNotifier({ smtp: smtpOf({ host: '127.0.0.1', port: await freePort() }), baseUrl: BASE_URL, logger, retry: { retries: 0, minDelayMs: 1 }, onOutcome: (o) => outcomes.push(o) });
    try {
      await runs.startWorker({ process: () => Promise.resolve({ ok: true, output: null }) }, { notifier, logger });
      await runs.queue.enqueue(aRun({ runId: RUN_ID, request: withEmail(ADDRESS) }));
      await eventually(() => outcomes.length > 0, 'the notification outcome');
      expect(await runs.store.get(RUN_ID)).to.include({ status: 'succeeded' });
      expect(outcomes).to.deep.equal(['failed']);
      expect(logger.lines.filter((l) => l.message.startsWith('run notification'))).to.have.length(1);
      expectNoSecrets(logger, '127.0.0.1');
    } finally {
      await runs.close();
    }
  });
});

describe('runFinishedMessage', function () {
  it('names the run id and status in the subject; the text ends with a newline and has no reason unless failed', function () {
    const message = runFinishedMessage(finished({ status: 'cancelled', failureReason: 'ignored' }), BASE_URL);
    expect(message.subject).to.equal(`Run ${RUN_ID} cancelled`);
    expect(message.text).to.match(/\n$/u).and.not.include('Reason:');
    expect(message.text).to.include('Ended at: 2026-01-01T00:00:05.000Z');
  });
});

describe('isTransientEmailError', function () {
  it('retries no answer and 4xx replies; never 5xx, refused credentials or bad settings', function () {
    const error = (fields: Record<string, unknown>): Error => Object.assign(new Error('x'), fields);
    for (const code of ['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EDNS', 'EABORT']) expect(isTransientEmailError(error({ code })), code).to.equal(true);
    expect(isTransientEmailError(error({ code: 'EENVELOPE', responseCode: 451, permanent: false }))).to.equal(true);
    expect(isTransientEmailError(error({ code: 'EENVELOPE', responseCode: 550, permanent: true }))).to.equal(false);
    expect(isTransientEmailError(error({ code: 'EAUTH', responseCode: 535, permanent: true }))).to.equal(false);
    for (const code of ['EAUTH', 'ENOAUTH', 'ETLS', 'ECONFIG', 'EMESSAGE']) expect(isTransientEmailError(error({ code })), code).to.equal(false);
    expect(isTransientEmailError(undefined)).to.equal(false);
  });
});
