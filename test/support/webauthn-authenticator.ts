import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

/**
 * A software WebAuthn authenticator for black-box tests: one P-256 (ES256) key per credential, real `none`
 * attestation objects in CBOR, and real assertions signed with node:crypto. The server verifies them with
 * its WebAuthn library exactly as it would a browser's.
 */

type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor> | { [key: string]: Cbor };

function head(major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value]);
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value]);
  if (value < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = (major << 5) | 25;
    b.writeUInt16BE(value, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(value, 1);
  return b;
}

/** The subset of CBOR (RFC 8949) that attestation objects and COSE keys use. */
export function cborEncode(value: Cbor): Buffer {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error('only integers');
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cborEncode)]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cborEncode(k), cborEncode(v)])]);
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64url = (data: Buffer) => data.toString('base64url');

export interface StoredCredential {
  id: Buffer;
  privateKey: KeyObject;
  rpId: string;
  /** The account handle from the creation options (`user.id`), returned by discoverable assertions. */
  userHandle: string;
  signCount: number;
}

export interface CeremonyOptions {
  /** Origin written into clientDataJSON (default: the authenticator's origin). */
  origin?: string;
  /** Whether the user-verified flag is set (default true). */
  userVerified?: boolean;
}

export class SoftwareAuthenticator {
  readonly credentials: StoredCredential[] = [];

  constructor(readonly origin: string) {}

  /** Answers `navigator.credentials.create()` for options as the server sent them. */
  register(options: any, ceremony: CeremonyOptions = {}): Record<string, unknown> {
    const rpId: string = options.rp.id;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = new Map<number, Cbor>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x as string, 'base64url')],
      [-3, Buffer.from(jwk.y as string, 'base64url')],
    ]);
    const id = randomBytes(32);
    const credential: StoredCredential = { id, privateKey, rpId, userHandle: options.user.id, signCount: 0 };
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      this.authDataHead(rpId, FLAG_UP | FLAG_AT | (ceremony.userVerified === false ? 0 : FLAG_UV), 0),
      Buffer.alloc(16), // AAGUID: none
      idLength,
      id,
      cborEncode(cose),
    ]);
    const attestationObject = cborEncode({ fmt: 'none', attStmt: {}, authData });
    const clientDataJSON = this.clientData('webauthn.create', options.challenge, ceremony.origin);
    this.credentials.push(credential);
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
    };
  }

  /**
   * Answers `navigator.credentials.get()`: with the credential the options allow, or (discoverable, empty
   * allow list) with `credential`, by default the newest one.
   */
  assert(options: any, ceremony: CeremonyOptions & { credential?: StoredCredential } = {}): Record<string, unknown> {
    const allowed: string[] = (options.allowCredentials ?? []).map((c: { id: string }) => c.id);
    const credential =
      ceremony.credential ??
      (allowed.length > 0
        ? this.credentials.find((c) => allowed.includes(b64url(c.id)))
        : this.credentials[this.credentials.length - 1]);
    if (!credential) throw new Error('no matching credential');
    credential.signCount += 1;
    const authData = this.authDataHead(
      options.rpId ?? credential.rpId,
      FLAG_UP | (ceremony.userVerified === false ? 0 : FLAG_UV),
      credential.signCount,
    );
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, ceremony.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
    };
  }

  private authDataHead(rpId: string, flags: number, signCount: number): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(signCount);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count]);
  }

  private clientData(type: string, challenge: string, origin?: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: origin ?? this.origin, crossOrigin: false }));
  }
}
