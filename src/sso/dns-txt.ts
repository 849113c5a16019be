import { Resolver } from 'node:dns/promises';

/** The TXT records at a name, each as its strings joined; [] when the name has none. */
export type TxtLookup = (name: string) => Promise<string[]>;

/** Answers that mean "no such record" rather than "could not ask". */
const ABSENT = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN']);

export class DnsUnavailableError extends Error {
  constructor(readonly code: string) {
    super(`the DNS servers did not answer (${code})`);
    this.name = 'DnsUnavailableError';
  }
}

/**
 * Domain verification's DNS (DASHBOARD 12): `DNS_SERVERS` when set (an operator's own resolvers, or a test's
 * responder), otherwise the system's. A name without the record is an empty list; a resolver that does not
 * answer is a DnsUnavailableError, so "not published yet" and "could not look" never read alike.
 */
export function createTxtLookup(servers: readonly string[]): TxtLookup {
  const resolver = new Resolver({ timeout: 2500, tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return async (name) => {
    try {
      const records = await resolver.resolveTxt(name);
      // A long value arrives in 255-byte strings; a record is their concatenation (RFC 7208 3.3).
      return records.map((parts) => parts.join(''));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
      if (ABSENT.has(code)) return [];
      throw new DnsUnavailableError(code);
    }
  };
}
