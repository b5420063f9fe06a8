// E-mail when a run ends (docs/decisions.md "E-mail notifications"): the API server as a
// child process, configured with `smtp`, sends the message to a real SMTP server on
// loopback; in process, the fallbacks: no `smtp` (the log line of before) and an SMTP
// server that is down (the run is unaffected, one warn line).
import { sha256Hex } from '@svc/core';
import { eventually, RecordingLogger } from '@svc/core/testing';
import { expect } from 'chai';
import { startServer, type RunningServer } from '../src/server.js';
import { settingsFrom } from '../src/settings.js';
import { apiKey, call, expectData } from '../../../tools/test-support/http.js';
import { startSmtpServer, type TestSmtpServer } from '../../../tools/test-support/smtp-server.js';
import { addresses, AGENTS, e2eConfig, SECRETS, type Addresses } from './support/fixture.js';
import { freePort, logLines, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

// Another loopback address than the listeners': the leak scan looks for it in every log line and answer.
const SMTP_HOST = '127.0.0.5';
const SMTP_USER = 'svc-e2e-mailer';
const SMTP_PASSWORD = 'e2e-smtp-Pa55word-never-logged';
const FROM = 'Agent runs <runs@svc-e2e.example>';
const file = { file_key: 'uploads/report.pdf', file_name: 'report.pdf', content_type: 'application/pdf' };

interface RunStart {
  readonly run_id: string;
  readonly status_url: string;
}

describe('e-mail when a run ends: the API server (child process) with smtp configured', function () {
  this.timeout(30_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let at: Addresses;
  let smtp: TestSmtpServer;
  let server: ServerProcess;
  let adminUrl: string;
  const key = apiKey(SECRETS.keyA);

  before(async function () {
    dir = await tempDir();
    at = await addresses();
    smtp = await startSmtpServer({ host: SMTP_HOST, auth: { user: SMTP_USER, password: SMTP_PASSWORD } });
    const config = e2eConfig(at, {
      // 50 ms runs (the demo's default is 500 ms): the e-mail is what these tests wait for.
      worker: { enabled: true, concurrency: 2, demo_delay_ms: 50 },
      admin_listen: { host: '127.0.0.1', port: 0 },
      smtp: { host: SMTP_HOST, port: smtp.port, user: SMTP_USER, from: FROM, timeout_ms: 5000 },
    });
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl, 20_000, { SVC_SMTP_PASSWORD: SMTP_PASSWORD });
    const listening = logLines(server).find((l) => l['msg'] === 'listening');
    adminUrl = `http://127.0.0.1:${listening?.['admin_port'] as number}`;
  });

  after(async function () {
    await server?.kill();
    await smtp?.close();
    await dir?.remove();
  });

  /** Starts an Option 1 run with `notification_email` and waits for its message. */
  async function runAndMail(address: string, message: string): Promise<{ run: RunStart; mail: TestSmtpServer['messages'][number] }> {
    const run = expectData<RunStart>(await call(at.url, 'POST', `/api/v1/agents/${AGENTS.main}/run`, { headers: key, json: { files: [file], message, notification_email: address } }), 202);
    const mailOf = () => smtp.messages.find((m) => m.headers.get('subject')?.includes(run.run_id));
    await eventually(() => mailOf() !== undefined, `the e-mail of run ${run.run_id}`, 10_000, 20);
    return { run, mail: mailOf() as TestSmtpServer['messages'][number] };
  }

  it('a succeeded run: one message To notification_email, From the configured address, naming run id, status, agent and status_url', async function () {
    const address = 'e2e.owner@customer-one.example';
    const { run, mail } = await runAndMail(address, 'Summarise the report');
    expect(mail.rcptTo).to.deep.equal([address]);
    expect(mail.headers.get('to')).to.equal(address);
    expect(mail.headers.get('from')).to.equal(FROM);
    expect(mail.user, 'authenticated with smtp.user and SVC_SMTP_PASSWORD').to.equal(SMTP_USER);
    expect(mail.headers.get('subject')).to.equal(`Run ${run.run_id} succeeded`);
    expect(mail.text).to.include(`Agent id: ${AGENTS.main}`).and.include('Status: succeeded').and.include(`Status URL: ${run.status_url}`);
    expect(run.status_url).to.equal(`${at.url}/api/v1/runs/${run.run_id}`);
    expect(expectData<{ status: string }>(await call(at.url, 'GET', run.status_url, { headers: key }), 200).status).to.equal('succeeded');
    await eventually(() => logLines(server).some((l) => l['msg'] === 'run notification sent' && l['run_id'] === run.run_id), 'the sent line');
    const line = logLines(server).find((l) => l['msg'] === 'run notification sent' && l['run_id'] === run.run_id);
    expect(line).to.include({ status: 'succeeded', channel: 'email', attempts: 1 });
    expect(line?.['request_id']).to.be.a('string');
    expect(smtp.messages.filter((m) => m.headers.get('subject')?.includes(run.run_id)), 'exactly one message').to.have.length(1);
  });

  it('a failed run: the message says failed and gives the reason; both are counted in svc_notifications_total', async function () {
    const { run, mail } = await runAndMail('e2e.owner@customer-two.example', 'please [fail]');
    expect(mail.headers.get('subject')).to.equal(`Run ${run.run_id} failed`);
    expect(mail.text).to.include('Status: failed').and.include('Reason: The demo agent was asked to fail.');
    const metrics = await (await fetch(`${adminUrl}/metrics`)).text();
    expect(metrics).to.match(/^svc_notifications_total\{channel="email",outcome="sent"\} 2$/mu);
    expect(metrics).to.not.match(/outcome="failed"/u);
  });
});

describe('e-mail when a run ends: fallbacks (in process)', function () {
  this.timeout(20_000);
  let server: RunningServer | undefined;
  let base: string;
  const KEY = 'svc-email-inproc-key-000000000000000';
  const ADDRESS = 'inproc.owner@customer-three.example';

  afterEach(async function () {
    await server?.stop();
    server = undefined;
  });

  async function start(extra: Record<string, unknown>, logger: RecordingLogger): Promise<void> {
    const [port, egressPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    const settings = settingsFrom({
      base_url: base,
      listen: { host: '127.0.0.1', port },
      egress: { url: `http://127.0.0.1:${egressPort}`, listen: { host: '127.0.0.1', port: egressPort } },
      admin_listen: { enabled: false },
      worker: { enabled: true, concurrency: 1, demo_delay_ms: 50 },
      // The runs name a made-up file key: what is checked is the e-mail.
      files: { verify_keys: false },
      shutdown_grace_ms: 2_000,
      accounts: [{ id: 'acct_mail', api_keys: [{ id: 'key_mail', sha256: sha256Hex(KEY) }], agents: [{ id: 'agent_mail' }] }],
      ...extra,
    }, {});
    server = await startServer(settings, { logger });
  }

  async function startRun(): Promise<RunStart> {
    return expectData<RunStart>(await call(base, 'POST', '/api/v1/agents/agent_mail/run', { headers: apiKey(KEY), json: { files: [file], notification_email: ADDRESS } }), 202);
  }

  it('without smtp: the log line of before (run finished: notification due), never the address', async function () {
    const logger = new RecordingLogger();
    await start({}, logger);
    const run = await startRun();
    await eventually(() => logger.lines.some((l) => l.message === 'run finished: notification due'), 'the notification line');
    expect(logger.lines.find((l) => l.message === 'run finished: notification due')?.fields).to.deep.include({ run_id: run.run_id, status: 'succeeded', channel: 'email' });
    expect(logger.text()).to.not.include(ADDRESS);
  });

  it('smtp configured but down: the run still succeeds; one warn line without the address, host or port after the retries', async function () {
    const logger = new RecordingLogger();
    const smtpPort = await freePort();
    await start({ smtp: { host: SMTP_HOST, port: smtpPort, from: FROM, timeout_ms: 1000 } }, logger);
    const run = await startRun();
    // Three attempts, refused at once, with 1 s and 2 s between them.
    await eventually(() => logger.lines.some((l) => l.message === 'run notification failed'), 'the failed line', 10_000, 20);
    expect(expectData<{ status: string }>(await call(base, 'GET', run.status_url, { headers: apiKey(KEY) }), 200).status).to.equal('succeeded');
    const failed = logger.lines.filter((l) => l.message === 'run notification failed');
    expect(failed).to.have.length(1);
    expect(failed[0]?.level).to.equal('warn');
    expect(failed[0]?.fields).to.deep.include({ run_id: run.run_id, status: 'succeeded', channel: 'email', attempts: 3, error_type: 'Error:ESOCKET' });
    expect(logger.lines.some((l) => l.message === 'run finished: notification due'), 'no log-line fallback beside SMTP').to.equal(false);
    for (const value of [ADDRESS, SMTP_HOST, String(smtpPort)]) expect(logger.text(), value).to.not.include(value);
  });
});
