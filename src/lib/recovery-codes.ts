import { randomInt } from 'node:crypto';
import { sha256Hex } from './crypto.js';

/** Letters and digits no one mistakes for another (no 0/O, 1/I/L, U/V). */
const ALPHABET = 'abcdefghjkmnpqrstwxyz23456789';
export const RECOVERY_CODE_COUNT = 10;
/** 16 characters of a 29-letter alphabet: 77 random bits, beyond guessing online or offline. */
const LENGTH = 16;

/** Ten new codes, as shown: `abcd-efgh-jkmn-pqrs`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let code = '';
    for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
    return code.match(/.{4}/g)!.join('-');
  });
}

/** A code as typed (any case, spaces or dashes) in the form it is hashed in; null when it cannot be one. */
export function normalizeRecoveryCode(typed: string): string | null {
  const code = typed.toLowerCase().replace(/[\s-]+/g, '');
  return code.length === LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : null;
}

/** What is stored: the hash of the normalised code. */
export function recoveryCodeHash(normalized: string): string {
  return sha256Hex(`recovery:${normalized}`);
}
