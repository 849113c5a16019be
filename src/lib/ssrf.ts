import dns from 'node:dns';
import net from 'node:net';
import { Agent, buildConnector } from 'undici';

/**
 * The SSRF guard: webhook URLs come from customers, so the service must never be turned into a client
 * of its own network. Creation refuses IP literals and localhost names that are not public; delivery
 * checks every address a host name resolves to, and connects only to an address it has checked.
 */
export class SsrfBlockedError extends Error {
  readonly code = 'ERR_SSRF_BLOCKED';
  constructor(
    readonly target: string,
    readonly reason: string,
    /** The host name the address was resolved from; null when the address was given as such. */
    readonly resolvedFrom: string | null = null,
  ) {
    super(`target address ${resolvedFrom === null ? target : `${target} of ${resolvedFrom}`} is not public (${reason})`);
    this.name = 'SsrfBlockedError';
  }

  /**
   * What a customer may be shown. The address a name resolved to, and what kind it is, stay in the log: shown,
   * they would answer for anyone what internal host names resolve to (security review F11).
   */
  get shownMessage(): string {
    return this.resolvedFrom === null ? this.message : `${this.resolvedFrom} does not resolve to a public address`;
  }
}

type Range = readonly [network: bigint, prefix: number, reason: string];

function ipv4ToInt(address: string): number | null {
  const parts = address.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

function ipv4Range(cidr: string, reason: string): Range {
  const [address, prefix] = cidr.split('/');
  return [BigInt(ipv4ToInt(address!)!), Number(prefix), reason];
}

// RFC 6890 and the IANA special-purpose registry; checked in order, first match names the reason.
const IPV4_RANGES: readonly Range[] = [
  ipv4Range('255.255.255.255/32', 'broadcast'),
  ipv4Range('0.0.0.0/8', '"this network"'),
  ipv4Range('10.0.0.0/8', 'private network'),
  ipv4Range('100.64.0.0/10', 'carrier-grade NAT'),
  ipv4Range('127.0.0.0/8', 'loopback'),
  ipv4Range('169.254.0.0/16', 'link-local'),
  ipv4Range('172.16.0.0/12', 'private network'),
  ipv4Range('192.0.0.0/24', 'IETF protocol assignments'),
  ipv4Range('192.0.2.0/24', 'documentation'),
  ipv4Range('192.88.99.0/24', '6to4 relay anycast'),
  ipv4Range('192.168.0.0/16', 'private network'),
  ipv4Range('198.18.0.0/15', 'benchmarking'),
  ipv4Range('198.51.100.0/24', 'documentation'),
  ipv4Range('203.0.113.0/24', 'documentation'),
  ipv4Range('224.0.0.0/4', 'multicast'),
  ipv4Range('240.0.0.0/4', 'reserved'),
];

/** The 128-bit value of an IPv6 address (a zone id such as `%eth0` is ignored). */
function ipv6ToBigInt(address: string): bigint | null {
  let text = address.split('%')[0]!;
  if (!net.isIPv6(text)) return null;
  // A dotted IPv4 tail (`::ffff:127.0.0.1`) becomes two hextets.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const v4 = ipv4ToInt(tail[1]!);
    if (v4 === null) return null;
    text = `${text.slice(0, -tail[1]!.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const groups = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function ipv6Range(cidr: string, reason: string): Range {
  const [address, prefix] = cidr.split('/');
  return [ipv6ToBigInt(address!)!, Number(prefix), reason];
}

function inRange(value: bigint, bits: number, [network, prefix]: Range): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === network >> shift;
}

/** Ranges whose low bits carry an IPv4 address: the IPv4 address decides. */
const IPV6_EMBEDDING: readonly (readonly [Range, (value: bigint) => bigint])[] = [
  [ipv6Range('::ffff:0:0/96', 'IPv4-mapped'), (v) => v & 0xffffffffn],
  [ipv6Range('64:ff9b::/96', 'NAT64'), (v) => v & 0xffffffffn],
  [ipv6Range('2002::/16', '6to4'), (v) => (v >> 80n) & 0xffffffffn],
];

const IPV6_RANGES: readonly Range[] = [
  ipv6Range('::/128', 'unspecified'),
  ipv6Range('::1/128', 'loopback'),
  ipv6Range('::/96', 'IPv4-compatible'),
  ipv6Range('64:ff9b:1::/48', 'local NAT64'),
  ipv6Range('100::/64', 'discard-only'),
  ipv6Range('2001:db8::/32', 'documentation'),
  ipv6Range('2001::/23', 'IETF protocol assignments'),
  ipv6Range('3fff::/20', 'documentation'),
  ipv6Range('fc00::/7', 'unique local'),
  ipv6Range('fe80::/10', 'link-local'),
  ipv6Range('fec0::/10', 'site-local'),
  ipv6Range('ff00::/8', 'multicast'),
];

// Only 2000::/3 is allocated for global unicast; anything outside it is reserved.
const IPV6_GLOBAL_UNICAST = ipv6Range('2000::/3', 'global unicast');

function classifyIpv4(value: number): string | null {
  const big = BigInt(value);
  return IPV4_RANGES.find((range) => inRange(big, 32, range))?.[2] ?? null;
}

function classifyIpv6(value: bigint): string | null {
  for (const [range, extract] of IPV6_EMBEDDING) {
    if (!inRange(value, 128, range)) continue;
    const embedded = Number(extract(value));
    const reason = classifyIpv4(embedded);
    const dotted = [24, 16, 8, 0].map((s) => (embedded >>> s) & 255).join('.');
    return reason === null ? null : `${range[2]} ${dotted}: ${reason}`;
  }
  const special = IPV6_RANGES.find((range) => inRange(value, 128, range));
  if (special) return special[2];
  return inRange(value, 128, IPV6_GLOBAL_UNICAST) ? null : 'reserved';
}

/** Strips the brackets of a URL's IPv6 host (`[::1]` → `::1`). */
function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Why an IP address is not public (`'loopback'`, `'private network'`, ...), or null when it is a
 * public address. Throws on something that is not an IP address.
 */
export function nonPublicReason(address: string): string | null {
  const ip = unbracket(address);
  const v4 = ipv4ToInt(ip);
  if (v4 !== null) return classifyIpv4(v4);
  const v6 = ipv6ToBigInt(ip);
  if (v6 !== null) return classifyIpv6(v6);
  throw new TypeError(`not an IP address: ${address}`);
}

export function isPublicAddress(address: string): boolean {
  return nonPublicReason(address) === null;
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The creation-time check of a webhook URL's host. The WHATWG parser has already normalised decimal,
 * octal, hex and short IPv4 forms to dotted decimal and IPv6 to its compressed form, so IP literals
 * are classified here and `localhost` names refused; other host names pass, because what they resolve
 * to can change and is checked at every delivery.
 */
export function assertPublicWebhookUrl(url: URL, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const host = unbracket(url.hostname);
  if (net.isIP(host)) {
    const reason = nonPublicReason(host);
    if (reason !== null) throw new SsrfBlockedError(host, reason);
  } else if (isLocalhostName(host)) {
    throw new SsrfBlockedError(host, 'loopback');
  }
}

export type ResolvedAddress = dns.LookupAddress;

/** `dns.lookup` with `all: true`, injectable so tests can play a resolver that lies. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * Every address the host name resolves to, refused as a whole if any one is not public: a name that
 * mixes public and private answers is a rebinding attempt, not a reason to pick the public one.
 */
export async function resolvePublicAddress(
  hostname: string,
  allowPrivate: boolean,
  resolver: Resolver = systemResolver,
): Promise<ResolvedAddress[]> {
  const host = unbracket(hostname);
  const family = net.isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await resolver(host);
  if (addresses.length === 0) throw Object.assign(new Error(`${host} did not resolve to any address`), { code: 'ENOTFOUND' });
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const reason = nonPublicReason(address);
      if (reason !== null) throw new SsrfBlockedError(address, reason, family !== 0 ? null : host);
    }
  }
  return addresses;
}

type LookupCallback = (err: Error | null, address: string | ResolvedAddress[], family?: number) => void;

/** A `net.connect` lookup that hands out only checked addresses, so the socket goes where we checked. */
function guardedLookup(allowPrivate: boolean, resolver: Resolver) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolvePublicAddress(hostname, allowPrivate, resolver).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no IPv${String(options.family)} address`), { code: 'ENOTFOUND' }), '');
        } else if (options.all) {
          callback(null, wanted);
        } else {
          callback(null, wanted[0]!.address, wanted[0]!.family);
        }
      },
      (error: Error) => callback(error, ''),
    );
  };
}

export interface GuardedAgentOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: skip the address checks (development and tests). */
  allowPrivate: boolean;
  /** TCP + TLS handshake deadline; default 10 s. */
  connectTimeoutMs?: number;
  /** Trusted CA(s) instead of Node's (tests with a self-signed server); production uses NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer | (string | Buffer)[];
  /** Idle time before a pooled keep-alive socket is closed; default 4 s. */
  keepAliveTimeoutMs?: number;
  /** Maximum sockets per origin; default unlimited. */
  connections?: number;
  resolver?: Resolver;
}

/**
 * An undici Agent for webhook delivery. Sockets are pooled per origin (keep-alive); each new socket
 * resolves the host through the guard and connects to exactly the checked address, while TLS still
 * verifies the certificate against the host name (SNI = host name), so DNS rebinding cannot slip in
 * between check and connect. A refusal fails the request with an SsrfBlockedError.
 */
export function createGuardedAgent(options: GuardedAgentOptions): Agent {
  const { allowPrivate, resolver = systemResolver } = options;
  const base = buildConnector({
    timeout: options.connectTimeoutMs ?? 10_000,
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
    lookup: guardedLookup(allowPrivate, resolver),
  } as buildConnector.BuildOptions);

  const connect: buildConnector.connector = (connectOptions, callback) => {
    // net.connect skips `lookup` for IP literals, so those are checked here.
    const host = unbracket(connectOptions.hostname);
    const reason = !allowPrivate && net.isIP(host) ? nonPublicReason(host) : null;
    if (reason !== null) {
      queueMicrotask(() => callback(new SsrfBlockedError(host, reason), null));
      return;
    }
    base(connectOptions, callback);
  };

  return new Agent({
    connect,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 4_000,
    ...(options.connections !== undefined ? { connections: options.connections } : {}),
  });
}
