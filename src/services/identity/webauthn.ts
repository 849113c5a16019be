import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import type { Repositories } from '../../db/repositories/index.js';
import type { ChallengePurpose, PasskeyRow } from '../../db/schema.js';
import { DomainError } from '../../errors.js';
import { sha256Hex } from '../../lib/crypto.js';

/** A challenge is answered within this long, or not at all. */
const CHALLENGE_TTL_MS = 5 * 60 * 1000;
const CEREMONY_TIMEOUT_MS = 120_000;

export const passkeyRefused = () => new DomainError(400, 'passkey_not_accepted', 'That passkey was not accepted. Try again, or use another way to sign in.');

/** What a challenge is bound to: the browser's secret (the session's token, or the sign-in page's pre-session secret), hashed. */
export function challengeBinding(browserSecret: string): string {
  return sha256Hex(`webauthn:${browserSecret}`);
}

/**
 * Passkey ceremonies with @simplewebauthn/server. The relying party is the public host name and origin
 * of PUBLIC_BASE_URL, never the request's Host header (a proxy or an attacker chooses that); user
 * verification is required everywhere (a passkey alone counts as two factors).
 */
export function webauthnRelyingParty(publicBaseUrl: string) {
  const url = new URL(publicBaseUrl);
  const rpID = url.hostname;
  const origin = url.origin;

  async function storeChallenge(repos: Repositories, challenge: string, purpose: ChallengePurpose, binding: string, userId: string | null, now: number) {
    await repos.webauthnChallenges.insert({ challenge, purpose, binding, user_id: userId, expires_at: now + CHALLENGE_TTL_MS });
  }

  /** The library's challenge check: the spent row is ours, for this purpose, browser and user. */
  function challengeCheck(spent: SpentChallenge<unknown>, purpose: ChallengePurpose, binding: string, userId: string | null) {
    const row = spent.row;
    return (challenge: string): boolean =>
      row !== undefined && row.challenge === challenge && row.purpose === purpose && row.binding === binding && (userId === null || row.user_id === userId);
  }

  return {
    rpID,
    origin,

    /**
     * Takes the challenge a browser's response answers out of the database, in a statement of its own that
     * commits before anything is verified: a refused response spends it as surely as an accepted one, so one
     * challenge never gets a second try (another credential, user verification on after off). Call it outside
     * the transaction that verifies, whose rollback would otherwise bring the challenge back.
     */
    async spend<T extends { id: string; response: object }>(repos: Repositories, response: unknown, now: number): Promise<SpentChallenge<T>> {
      const credential = asCredential<T>(response);
      const challenge = challengeOf(credential);
      const row = challenge === '' ? undefined : await repos.webauthnChallenges.take(challenge, now);
      return { credential, row };
    },

    async registrationOptions(
      repos: Repositories,
      user: { id: string; email: string; name: string | null },
      existing: readonly PasskeyRow[],
      binding: string,
      now: number,
    ): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const options = await generateRegistrationOptions({
        rpName: 'Workspace Service',
        rpID,
        userName: user.email,
        userDisplayName: user.name ?? user.email,
        // The WebAuthn user handle: our random user id, never the e-mail.
        userID: new TextEncoder().encode(user.id),
        timeout: CEREMONY_TIMEOUT_MS,
        attestationType: 'none',
        excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      await storeChallenge(repos, options.challenge, 'register', binding, user.id, now);
      return options;
    },

    /** The new passkey's row, or throws `passkey_not_accepted`. The challenge was spent first (`spend`). */
    async verifyRegistration(spent: SpentChallenge<RegistrationResponseJSON>, binding: string, userId: string) {
      let verified;
      try {
        verified = await verifyRegistrationResponse({
          response: spent.credential,
          expectedChallenge: challengeCheck(spent, 'register', binding, userId),
          expectedOrigin: origin,
          expectedRPID: rpID,
          requireUserVerification: true,
        });
      } catch {
        throw passkeyRefused();
      }
      if (!verified.verified) throw passkeyRefused();
      const info = verified.registrationInfo;
      return {
        credential_id: info.credential.id,
        public_key: isoBase64URL.fromBuffer(info.credential.publicKey),
        counter: info.credential.counter,
        transports: info.credential.transports ? JSON.stringify(info.credential.transports) : null,
        device_type: info.credentialDeviceType,
        backed_up: info.credentialBackedUp ? 1 : 0,
        aaguid: info.aaguid,
      };
    },

    /** Options for a sign-in (no one named: a discoverable credential) or for one user's passkeys. */
    async authenticationOptions(repos: Repositories, purpose: ChallengePurpose, binding: string, passkeys: readonly PasskeyRow[] | null, userId: string | null, now: number): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const options = await generateAuthenticationOptions({
        rpID,
        timeout: CEREMONY_TIMEOUT_MS,
        userVerification: 'required',
        allowCredentials: passkeys?.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })) ?? [],
      });
      await storeChallenge(repos, options.challenge, purpose, binding, userId, now);
      return options;
    },

    /**
     * The passkey a response signed with, its signature checked against the challenge it spent (`spend`) and
     * its counter recorded; throws `passkey_not_accepted` otherwise. `userId` limits it to one user's passkeys.
     */
    async verifyAuthentication(repos: Repositories, spent: SpentChallenge<AuthenticationResponseJSON>, purpose: ChallengePurpose, binding: string, userId: string | null, now: number): Promise<PasskeyRow> {
      const parsed = spent.credential;
      const passkey = await repos.secondFactors.findPasskeyByCredentialAnyOrg(parsed.id);
      if (!passkey || (userId !== null && passkey.user_id !== userId)) throw passkeyRefused();
      let verified;
      try {
        verified = await verifyAuthenticationResponse({
          response: parsed,
          expectedChallenge: challengeCheck(spent, purpose, binding, userId ?? null),
          expectedOrigin: origin,
          expectedRPID: rpID,
          credential: { id: passkey.credential_id, publicKey: isoBase64URL.toBuffer(passkey.public_key), counter: passkey.counter, transports: transportsOf(passkey) },
          requireUserVerification: true,
        });
      } catch {
        throw passkeyRefused();
      }
      if (!verified.verified) throw passkeyRefused();
      await repos.secondFactors.passkeyUsed(passkey.org_id, passkey.id, verified.authenticationInfo.newCounter, now);
      return passkey;
    },
  };
}

export type WebauthnRelyingParty = ReturnType<typeof webauthnRelyingParty>;

/** A browser's response with the challenge it answered, already taken out of the database. */
export interface SpentChallenge<T> {
  credential: T;
  /** Undefined when the challenge was not ours, was taken before, or had expired. */
  row: { challenge: string; purpose: ChallengePurpose; binding: string; user_id: string | null } | undefined;
}

export type { AuthenticationResponseJSON, RegistrationResponseJSON };

function transportsOf(passkey: PasskeyRow): never[] | undefined {
  return passkey.transports ? (JSON.parse(passkey.transports) as never[]) : undefined;
}

/** The browser's JSON, shaped enough to hand to the library (which checks the rest). */
function asCredential<T extends { id: string; response: object }>(value: unknown): T {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw passkeyRefused();
    }
  }
  const shape = parsed as { id?: unknown; rawId?: unknown; type?: unknown; response?: { clientDataJSON?: unknown } } | null;
  if (!shape || typeof shape.id !== 'string' || shape.id.length > 1024 || typeof shape.response !== 'object' || shape.response === null || typeof shape.response.clientDataJSON !== 'string') {
    throw passkeyRefused();
  }
  return parsed as T;
}

function challengeOf(response: { response: object }): string {
  // The challenge as the browser signed it; the library compares it again with what `spend` took.
  try {
    const data = JSON.parse(isoBase64URL.toUTF8String((response.response as { clientDataJSON: string }).clientDataJSON)) as { challenge?: unknown };
    return typeof data.challenge === 'string' ? data.challenge : '';
  } catch {
    return '';
  }
}
