import { generate, generateSecret, generateURI, verify } from 'otplib';

/** RFC 6238 as authenticator apps expect it (DASHBOARD 11): SHA-1, 6 digits, 30-second steps. */
const PERIOD_S = 30;

/** A new base32 secret: 160 random bits (otplib's default, above RFC 4226's 128-bit floor). */
export function newTotpSecret(): string {
  return generateSecret();
}

/** The `otpauth://` address an app reads from the QR code. */
export function totpUri(secret: string, issuer: string, account: string): string {
  return generateURI({ issuer, label: account, secret });
}

/** The time step a code was made for, when it is right for the step of `nowMs` or the one before or after; else null. */
export async function totpStepOf(secret: string, code: string, nowMs: number): Promise<number | null> {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const epoch = Math.floor(nowMs / 1000);
  const result = await verify({ secret, token, epoch, epochTolerance: PERIOD_S });
  return result.valid ? Math.floor(epoch / PERIOD_S) + result.delta : null;
}

/** The code for a moment: what an app shows then (tests, and the CLI's checks). */
export async function totpCodeAt(secret: string, atMs: number): Promise<string> {
  return generate({ secret, epoch: Math.floor(atMs / 1000) });
}

/** "JBSW Y3DP …": the secret in groups of four, as a person types it into an app. */
export function groupedSecret(secret: string): string {
  return secret.match(/.{1,4}/g)?.join(' ') ?? secret;
}
