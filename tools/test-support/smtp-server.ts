// An SMTP server of a test's own (the `smtp-server` package, nodemailer's sibling) on a
// spare loopback port: a real SMTP conversation, whose messages the test reads back.
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';

/** One message the server accepted. */
export interface ReceivedMail {
  /** The envelope's sender (`MAIL FROM`). */
  readonly mailFrom: string;
  /** The envelope's recipients (`RCPT TO`). */
  readonly rcptTo: readonly string[];
  /** The user that authenticated on its connection, if any. */
  readonly user?: string;
  /** Header fields by lower-case name (unfolded; the last of a repeated field). */
  readonly headers: ReadonlyMap<string, string>;
  /** The body, decoded when it is quoted-printable. */
  readonly text: string;
  /** The whole message as received. */
  readonly raw: string;
}

/** Options of {@link startSmtpServer}. */
export interface SmtpServerOptions {
  /** Loopback address to listen on; default `127.0.0.1` (another 127.x address makes the host one the leak scan can look for). */
  readonly host?: string;
  /** Require AUTH (PLAIN or LOGIN, over plain TCP) with this user and password; default no AUTH. */
  readonly auth?: { readonly user: string; readonly password: string };
  /**
   * The reply to the n-th `RCPT TO` (counted from 1) as `[code, text]`, or undefined to
   * accept it; e.g. `(n) => (n === 1 ? [451, 'try again'] : undefined)`.
   */
  readonly rcptReply?: (n: number, address: string) => readonly [number, string] | undefined;
}

/** A running test SMTP server. */
export interface TestSmtpServer {
  readonly host: string;
  readonly port: number;
  /** Every message accepted so far, in order. */
  readonly messages: readonly ReceivedMail[];
  /** `RCPT TO` commands seen so far (accepted or not). */
  readonly rcptCount: number;
  /** Stops listening and closes open connections; resolves when closed. */
  close(): Promise<void>;
}

function errorWithCode(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/** Headers (unfolded) and body of a raw message; the body decoded when quoted-printable. */
function parse(raw: string): { headers: Map<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? '' : raw.slice(split + 4);
  const headers = new Map<string, string>();
  for (const field of head.replace(/\r\n[ \t]+/gu, ' ').split('\r\n')) {
    const colon = field.indexOf(':');
    if (colon > 0) headers.set(field.slice(0, colon).trim().toLowerCase(), field.slice(colon + 1).trim());
  }
  const qp = /quoted-printable/iu.test(headers.get('content-transfer-encoding') ?? '');
  const text = qp
    ? Buffer.from(body.replace(/=\r\n/gu, '').replace(/=([0-9A-F]{2})/gu, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8')
    : body;
  return { headers, text: text.replace(/\r\n/gu, '\n') };
}

/** Starts an SMTP server on `options.host` and a port the system picks; resolves once it listens. */
export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const host = options.host ?? '127.0.0.1';
  const messages: ReceivedMail[] = [];
  let rcptCount = 0;
  const server = new SMTPServer({
    logger: false,
    secure: false,
    // No STARTTLS: its certificate would be the package's self-signed one.
    disabledCommands: options.auth === undefined ? ['STARTTLS', 'AUTH'] : ['STARTTLS'],
    authOptional: options.auth === undefined,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    closeTimeout: 1000,
    onAuth(auth, _session, callback) {
      if (options.auth !== undefined && auth.username === options.auth.user && auth.password === options.auth.password) callback(null, { user: auth.username });
      else callback(errorWithCode(535, 'Authentication failed'));
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      rcptCount += 1;
      const reply = options.rcptReply?.(rcptCount, address.address);
      callback(reply === undefined ? null : errorWithCode(reply[0], reply[1]));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const envelope = session.envelope;
        messages.push({
          mailFrom: envelope.mailFrom === false ? '' : envelope.mailFrom.address,
          rcptTo: envelope.rcptTo.map((r) => r.address),
          ...(typeof session.user === 'string' ? { user: session.user } : {}),
          ...parse(raw),
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('the SMTP server bound no TCP port');
  return {
    host,
    port: address.port,
    messages,
    get rcptCount() {
      return rcptCount;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
