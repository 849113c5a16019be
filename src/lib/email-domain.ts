import { domainToASCII } from 'node:url';

/** Lower case ASCII (punycode), no trailing dot; null when it cannot be an e-mail domain. */
export function normalizeDomain(input: string): string | null {
  const trimmed = input.trim().toLowerCase().replace(/\.$/, '');
  if (trimmed === '' || trimmed.length > 253 || /[\s/@:]/.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed);
  if (!ascii || !ascii.includes('.') || ascii.length > 253) return null;
  if (!ascii.split('.').every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label))) return null;
  return ascii;
}

/** The domain of an e-mail address as domains are stored, or null. */
export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf('@');
  return at > 0 ? normalizeDomain(email.slice(at + 1)) : null;
}
