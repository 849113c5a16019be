import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

interface Credential {
  id: string;
  privateKey: KeyObject;
  userHandle: string;
  counter: number;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

/**
 * A software WebAuthn authenticator (ES256, attestation `none`), like the one the security review used: it
 * makes the browser's JSON for a registration or an assertion over any challenge, with user verification on
 * or off, so a test can send what Chromium never would (an unknown credential, then the real one, over one
 * challenge). The relying party checks it with the same library as a real browser's.
 */
export class SoftAuthenticator {
  readonly credentials = new Map<string, Credential>();

  constructor(
    private readonly rpId: string,
    private readonly origin: string,
  ) {}

  private rpIdHash(): Buffer {
    return createHash('sha256').update(this.rpId).digest();
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): string {
    return isoBase64URL.fromBuffer(Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false })));
  }

  /** A new credential for these creation options. */
  register(options: PublicKeyCredentialCreationOptionsJSON, { uv = true }: { uv?: boolean } = {}): RegistrationResponseJSON {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const idBytes = randomBytes(16);
    const id = isoBase64URL.fromBuffer(idBytes);
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, isoBase64URL.toBuffer(jwk.x!)],
      [-3, isoBase64URL.toBuffer(jwk.y!)],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(idBytes.length);
    const authData = Buffer.concat([
      this.rpIdHash(),
      Buffer.from([FLAG_UP | (uv ? FLAG_UV : 0) | FLAG_AT]),
      Buffer.alloc(4),
      Buffer.alloc(16),
      idLength,
      idBytes,
      Buffer.from(isoCBOR.encode(cose as never)),
    ]);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
    this.credentials.set(id, { id, privateKey, userHandle: options.user.id, counter: 0 });
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: { clientDataJSON: this.clientData('webauthn.create', options.challenge), attestationObject: isoBase64URL.fromBuffer(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** An assertion over these request options, by one credential (the first it holds, unless named). */
  assert(options: PublicKeyCredentialRequestOptionsJSON, { credentialId, uv = true }: { credentialId?: string; uv?: boolean } = {}): AuthenticationResponseJSON {
    const credential = credentialId ? this.credentials.get(credentialId) : this.credentials.values().next().value;
    if (!credential) throw new Error('the soft authenticator has no such credential');
    credential.counter++;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(credential.counter);
    const authData = Buffer.concat([this.rpIdHash(), Buffer.from([FLAG_UP | (uv ? FLAG_UV : 0)]), counter]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge);
    const signed = Buffer.concat([authData, createHash('sha256').update(isoBase64URL.toBuffer(clientDataJSON)).digest()]);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON,
        authenticatorData: isoBase64URL.fromBuffer(authData),
        signature: isoBase64URL.fromBuffer(sign('sha256', signed, credential.privateKey)),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
