import { errorTypeOf, silentLogger, type Logger, type Notifier, type Run } from '@svc/core';
import { createTransport, type Transporter } from 'nodemailer';
import pRetry from 'p-retry';
import { runFinishedMessage } from './message.js';

/**
 * Where and how e-mails are sent: one SMTP server (a relay or a provider's submission
 * endpoint). Source: docs/decisions.md "E-mail notifications".
 */
export interface SmtpSettings {
  /** Host name or address of the SMTP server. Never logged. */
  readonly host: string;
  /** TCP port, e.g. 587 (submission, STARTTLS) or 465 (implicit TLS). */
  readonly port: number;
  /**
   * True: TLS from the first byte (port 465). False: plain TCP, upgraded with STARTTLS
   * whenever the server offers it (nodemailer's default); see {@link SmtpSettings.requireTls}.
   */
  readonly secure: boolean;
  /** True: refuse to send when a non-`secure` connection cannot be upgraded with STARTTLS. Default false. */
  readonly requireTls?: boolean;
  /** User name for SMTP AUTH; absent: no authentication. Never logged. */
  readonly user?: string;
  /** Password for SMTP AUTH (with `user`). A secret: never logged. */
  readonly password?: string;
  /** The `From` of every message: an address, or `Name <address>`. */
  readonly from: string;
  /**
   * Bound in milliseconds of one send attempt, whole (connect, greeting, TLS, AUTH,
   * envelope, data): past it the attempt is aborted (`AbortSignal.timeout`, nodemailer
   * error `EABORT`). Each of nodemailer's own step timeouts (DNS, connection, greeting,
   * socket inactivity) is set to it too, so that a step that hangs fails with its own
   * code (`ETIMEDOUT`).
   */
  readonly timeoutMs: number;
}

/** How one message ended, for a metric: delivered to the SMTP server, or given up. */
export type EmailOutcome = 'sent' | 'failed';

/** Retries of {@link SmtpNotifier}: attempts after the first, and the wait before the first retry (doubled each time). */
export interface EmailRetrySettings {
  /** Retries after the first attempt; default {@link DEFAULT_EMAIL_RETRY.retries} (2). */
  readonly retries: number;
  /** Ms before the first retry, doubled for each next one; default {@link DEFAULT_EMAIL_RETRY.minDelayMs} (1000). */
  readonly minDelayMs: number;
}

/**
 * Default retries: 2 (3 attempts), waiting 1 s then 2 s. A transient failure (the server
 * unreachable, a connection cut, a timeout, a 4xx reply) often clears within seconds (a
 * relay restarting, greylisting's first 4xx is longer and is not waited out); a longer
 * outage is not bridged here, since the worker that finished the run waits for its
 * notifier. Source: docs/decisions.md "E-mail notifications".
 */
export const DEFAULT_EMAIL_RETRY: EmailRetrySettings = Object.freeze({ retries: 2, minDelayMs: 1000 });

/** What an {@link SmtpNotifier} is built with. */
export interface SmtpNotifierOptions {
  /** The SMTP server and the `From`. */
  readonly smtp: SmtpSettings;
  /** The API's `base_url` (no trailing slash): the message names the run's `status_url` (core `statusUrlOf`). */
  readonly baseUrl: string;
  /** Where the `run notification sent` / `failed` lines go; default silent. */
  readonly logger?: Logger;
  /** Retries of a transient failure; default {@link DEFAULT_EMAIL_RETRY}. */
  readonly retry?: EmailRetrySettings;
  /** Told once per message how it ended (e.g. `svc_notifications_total{channel="email",outcome}`); must not throw. */
  readonly onOutcome?: (outcome: EmailOutcome) => void;
}

/** Nodemailer's error codes of a failure that a later attempt may not meet (no SMTP reply). */
const TRANSIENT_CODES: ReadonlySet<string> = new Set(['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EDNS', 'EABORT']);

/** Fields of a nodemailer error that are safe to read (its message and `response` may hold an address or a host). */
interface MailError {
  readonly code?: unknown;
  readonly responseCode?: unknown;
  readonly permanent?: unknown;
}

/**
 * True when another attempt may succeed: the server answered with a transient reply (4xx,
 * or 503; nodemailer's `permanent: false`), or did not answer at all (unreachable,
 * connection cut, a timeout, our own abort). Refused credentials, a 5xx rejection, a
 * TLS failure or a bad configuration would fail the same way again.
 */
export function isTransientEmailError(error: unknown): boolean {
  const e = (error ?? {}) as MailError;
  if (typeof e.responseCode === 'number') return e.permanent === false;
  return typeof e.code === 'string' && TRANSIENT_CODES.has(e.code);
}

/**
 * The {@link Notifier} that e-mails a run's `notification_email` (Option 1 runs only,
 * core `RunRequest`) when the run reaches its final status, over SMTP with nodemailer:
 * To the run's address, From {@link SmtpSettings.from}, subject and plain text naming the
 * run id, the agent id, the final status, the failure reason of a failed run and the
 * run's `status_url` ({@link runFinishedMessage}). Runs without an address: nothing is
 * sent, logged or counted.
 *
 * One connection per message (no pool: runs end seldom, and nothing stays open to close
 * at shutdown). A transient failure is retried ({@link isTransientEmailError},
 * {@link DEFAULT_EMAIL_RETRY}); so one call lasts at most `(retries + 1) × timeoutMs`
 * plus the waits (default 3 × 10 s + 3 s). Then one line: info `run notification sent`
 * or warn `run notification failed`, with `run_id`, `request_id`, `status`,
 * `channel: "email"`, `attempts`, and when failed `error_type` (nodemailer's code) and
 * `smtp_response_code` when the server replied: never the address, the host, the user,
 * the password, nor an error's message or the server's reply text (either may hold an
 * address or a host). Never rejects, and never changes the run (core `Notifier`).
 * Source: docs/decisions.md "E-mail notifications"; docs/CONTRACT.md "Runs" (`notification_email`).
 */
export class SmtpNotifier implements Notifier {
  private readonly transport: Transporter;
  private readonly logger: Logger;
  private readonly retry: EmailRetrySettings;

  /** @param options - the SMTP server, `base_url`, logger, retries and outcome callback. */
  constructor(private readonly options: SmtpNotifierOptions) {
    const { smtp } = options;
    this.logger = options.logger ?? silentLogger;
    this.retry = options.retry ?? DEFAULT_EMAIL_RETRY;
    this.transport = createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      requireTLS: smtp.requireTls ?? false,
      ...(smtp.user !== undefined ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
      // nodemailer's defaults (2 min to connect, 30 s greeting, 10 min of socket
      // inactivity) would hold the worker that finished the run for minutes: every step
      // is bounded by the attempt's own bound, and the whole attempt by the signal below.
      connectionTimeout: smtp.timeoutMs,
      greetingTimeout: smtp.timeoutMs,
      socketTimeout: smtp.timeoutMs,
      dnsTimeout: smtp.timeoutMs,
      // nodemailer logs nothing unless told to: it would write the envelope (addresses).
      logger: false,
    });
  }

  /** Sends the message when the run has an address; resolves when it was sent or given up; never rejects. */
  async runFinished(run: Run): Promise<void> {
    const to = run.request.kind === 'files' ? run.request.notificationEmail : undefined;
    if (to === undefined) return;
    const { subject, text } = runFinishedMessage(run, this.options.baseUrl);
    const fields = { run_id: run.runId, ...(run.requestId !== undefined ? { request_id: run.requestId } : {}), status: run.status, channel: 'email' };
    let attempts = 0;
    try {
      await pRetry(
        async () => {
          attempts += 1;
          await this.transport.sendMail({ from: this.options.smtp.from, to, subject, text, signal: AbortSignal.timeout(this.options.smtp.timeoutMs) });
        },
        {
          retries: this.retry.retries,
          minTimeout: this.retry.minDelayMs,
          factor: 2,
          shouldRetry: ({ error }) => isTransientEmailError(error),
        },
      );
    } catch (error) {
      const responseCode = (error as MailError | undefined)?.responseCode;
      this.logger.warn(
        { ...fields, attempts, error_type: errorTypeOf(error), ...(typeof responseCode === 'number' ? { smtp_response_code: responseCode } : {}) },
        'run notification failed',
      );
      this.count('failed');
      return;
    }
    this.logger.info({ ...fields, attempts }, 'run notification sent');
    this.count('sent');
  }

  private count(outcome: EmailOutcome): void {
    try {
      this.options.onOutcome?.(outcome);
    } catch {
      // A metric is never worth a rejected notification (core Notifier contract).
    }
  }
}
