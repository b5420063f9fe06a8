import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';

/** Where a request came from, as the access log and the request span state it. */
export interface ClientAddress {
  /** The client's IP address: the peer's, or from `X-Forwarded-For` when the peer is a trusted proxy. */
  readonly ip: string;
  /** `http` or `https`: from `X-Forwarded-Proto` when the peer is a trusted proxy, else the listener's. */
  readonly scheme: string;
}

/** Finds the {@link ClientAddress} of a request; built once per app by {@link clientAddressResolver}. */
export type ClientAddressResolver = (req: IncomingMessage) => ClientAddress;

/**
 * Compiles the trusted proxies of the configuration (`trusted_proxies`): IPv4 or IPv6
 * addresses, CIDR ranges (`10.0.0.0/8`), or proxy-addr's names `loopback`, `linklocal`,
 * `uniquelocal`.
 * @throws RangeError naming the entry proxy-addr cannot read.
 */
export function compileTrustedProxies(entries: readonly string[]): (address: string, hop: number) => boolean {
  for (const entry of entries) {
    try {
      proxyAddr.compile(entry);
    } catch {
      throw new RangeError(`trusted proxy ${JSON.stringify(entry)} is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal`);
    }
  }
  return proxyAddr.compile([...entries]);
}

function schemeOf(req: IncomingMessage): string {
  return (req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http';
}

/**
 * The resolver of client addresses for `trustedProxies` (see {@link compileTrustedProxies}).
 * `X-Forwarded-For` and `X-Forwarded-Proto` are honoured only when the peer that sent the
 * request is trusted: the client IP is then the nearest untrusted address of the
 * `X-Forwarded-For` chain (proxy-addr, as Express does it), the scheme the first value of
 * `X-Forwarded-Proto`. Without trusted proxies both headers are ignored and the peer's
 * address is the client's. Used for logs and spans only, never to decide who a caller is
 * or what it may do. Source: docs/decisions.md "Observability".
 * @throws RangeError as {@link compileTrustedProxies}.
 */
export function clientAddressResolver(trustedProxies: readonly string[] = []): ClientAddressResolver {
  if (trustedProxies.length === 0) return (req) => ({ ip: req.socket.remoteAddress ?? '', scheme: schemeOf(req) });
  const trust = compileTrustedProxies(trustedProxies);
  return (req) => {
    const peer = req.socket.remoteAddress ?? '';
    if (peer === '' || !trust(peer, 0)) return { ip: peer, scheme: schemeOf(req) };
    const proto = req.headers['x-forwarded-proto'];
    const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
    return { ip: proxyAddr(req, trust), scheme: first === 'https' || first === 'http' ? first : schemeOf(req) };
  };
}
