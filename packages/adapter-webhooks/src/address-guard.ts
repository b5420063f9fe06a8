import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Thrown (or handed to a connect callback) when a webhook URL's host is, or resolves only
 * to, an address the SSRF rule refuses (docs/decisions.md "Webhooks"). Its message names the
 * address's range (e.g. `loopback`), never the host or the URL.
 */
export class WebhookAddressRefusedError extends Error {
  override readonly name = 'WebhookAddressRefusedError';
  /** Stable code, as Node's network errors carry one. */
  readonly code = 'ERR_WEBHOOK_ADDRESS_REFUSED';
  /** @param range - the ipaddr.js range name of the refused address. */
  constructor(readonly range: string) {
    super(`webhook target address refused: ${range} addresses are not allowed`);
  }
}

/**
 * The ipaddr.js range of `address` (an IPv4 or IPv6 literal, brackets allowed), with an
 * IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) judged as the IPv4 address it maps to.
 * `invalid` when it is no IP address.
 */
export function addressRange(address: string): string {
  const bare = address.replace(/^\[(.*)\]$/u, '$1');
  if (!ipaddr.isValid(bare)) return 'invalid';
  let parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  // IPv4-compatible IPv6 (::/96, deprecated by RFC 4291 2.5.5.1; `::7f00:1` is 127.0.0.1):
  // ipaddr.js calls it unicast, but its IPv4 part could be any range.
  if (range === 'unicast' && parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return 'ipv4Compatible';
  return range;
}

/**
 * True when a delivery may connect to `address`: only ipaddr.js's `unicast` range, i.e.
 * public addresses. Everything else is refused: loopback, private (RFC 1918), link-local,
 * unique-local IPv6, carrier-grade NAT (100.64/10), unspecified (0.0.0.0/8, ::), multicast,
 * broadcast, reserved and documentation ranges, and IPv6 forms that embed an IPv4 address
 * (6to4, Teredo, NAT64 `64:ff9b::/96`, IPv4-compatible `::/96`), whose IPv4 part could be
 * any of those.
 * `allowPrivate` (config `webhooks.allow_private_addresses`) lets every valid address through.
 */
export function isAllowedAddress(address: string, allowPrivate: boolean): boolean {
  const range = addressRange(address);
  if (range === 'invalid') return false;
  return allowPrivate || range === 'unicast';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect` (undici's `connect.lookup`) that resolves like `dns.lookup`
 * and keeps only the addresses {@link isAllowedAddress} lets through. The socket connects
 * to the address this hands back, so the address checked is the address used: a name that
 * resolves to a public address at check time and to 127.0.0.1 at connect time (DNS
 * rebinding) has no gap to slip through. With no address left, the callback gets a
 * {@link WebhookAddressRefusedError}.
 *
 * Node calls no lookup for an IP literal host: check those with {@link isAllowedAddress}
 * before connecting (the sender does).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, []);
      const list = addresses as LookupAddress[];
      const allowed = list.filter((a) => isAllowedAddress(a.address, allowPrivate));
      if (allowed.length === 0) return callback(new WebhookAddressRefusedError(list[0] === undefined ? 'invalid' : addressRange(list[0].address)), []);
      if (options.all === true) return callback(null, allowed);
      const first = allowed[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * Checks a URL's host when it is an IP literal (Node calls no lookup for those).
 * @throws WebhookAddressRefusedError when the literal is not allowed.
 */
export function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  const host = url.hostname.replace(/^\[(.*)\]$/u, '$1');
  if (isIP(host) !== 0 && !isAllowedAddress(host, allowPrivate)) throw new WebhookAddressRefusedError(addressRange(host));
}
