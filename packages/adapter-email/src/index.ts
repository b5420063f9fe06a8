/**
 * `@svc/adapter-email`: the core `Notifier` port on nodemailer. {@link SmtpNotifier}
 * e-mails a run's `notification_email` over SMTP when the run reaches its final status;
 * {@link runFinishedMessage} is the message it sends. Source: docs/decisions.md "E-mail
 * notifications".
 */
export { runFinishedMessage, type RunFinishedMessage } from './message.js';
export {
  DEFAULT_EMAIL_RETRY,
  isTransientEmailError,
  SmtpNotifier,
  type EmailOutcome,
  type EmailRetrySettings,
  type SmtpNotifierOptions,
  type SmtpSettings,
} from './smtp-notifier.js';
