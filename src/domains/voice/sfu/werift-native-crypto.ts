import {
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  type KeyObject,
  sign,
  timingSafeEqual,
} from 'node:crypto';
import { createRequire } from 'node:module';
import { CipherContext, type SignatureHash } from 'werift';

/**
 * The public-key work of werift's DTLS handshake on node:crypto instead of JavaScript (docs/voice.md#join-admission).
 * In a profile of a join wave a handshake cost the SFU about 11 ms of CPU, of which X25519 (tweetnacl, JavaScript)
 * about 3.7 ms and the ECDSA signature about 1.9 ms (OpenSSL parsing the key from PEM at every signature); join
 * waves are what starve the event loop that forwards everyone's audio.
 *
 * Why these hooks: the server imports werift's ESM bundle (`lib/index.mjs`), whose own functions
 * (`prfPreMasterSecret`, `generateKeyPair`) are bundle-local and cannot be replaced. What it reaches at call time
 * can be: tweetnacl is CommonJS and the bundle calls `nacl.scalarMult` and `nacl.box.keyPair` on its exports
 * object; the certificate's key is an `@fidm/x509` `PrivateKey` (CommonJS, a prototype); `CipherContext` is
 * exported by werift (its certificate parse is also made once per certificate here). Each replacement gives the
 * original's result for the same input (test/unit/voice-werift-native-crypto.test.ts) and hands anything it does
 * not cover to the original. werift's P-256 ECDHE (`@noble/curves`, a frozen object) stays: werift and Chromium
 * both offer X25519 first. werift verifies no handshake signature of its peer, so there is no verification to
 * replace; the SFU adds that check itself (dtls-peer-signature.ts), on node:crypto.
 */

/** The marker a replacement carries: the function it replaced (also how a second install sees the first). */
const REPLACED = Symbol.for('hearth.werift-native-crypto.replaced');

type Replacement<F> = F & { [REPLACED]?: F };
type ScalarMult = (n: Uint8Array, p: Uint8Array) => Uint8Array;
type KeyPair = () => { publicKey: Uint8Array; secretKey: Uint8Array };
type Sign = (this: FidmPrivateKey, data: Buffer, hashAlgorithm: string) => Buffer;
type SignatureData = (this: CipherContext, data: Buffer, hash: string) => Buffer;
type ParseX509 = (this: CipherContext, certPem: string, keyPem: string, signatureHash: SignatureHash) => void;

interface Tweetnacl {
  scalarMult: Replacement<ScalarMult>;
  box: { keyPair: Replacement<KeyPair> };
}
interface FidmPrivateKey {
  toPEM(): string;
}
interface FidmX509 {
  PrivateKey: { prototype: { sign: Replacement<Sign> } };
}

const X25519_BYTES = 32;
/** PKCS#8 DER of an X25519 private key up to its 32 raw bytes (RFC 8410 §7). */
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

/**
 * The KeyObject of each X25519 secret this module generated, by the secret's own ArrayBuffer: werift keeps
 * `Buffer.from(keys.secretKey.buffer)`, a view of the same memory, and hands it back to `scalarMult`. Importing a
 * raw private key into OpenSSL costs about 0.9 ms (its DER decoder), more than the key agreement itself.
 */
const generated = new WeakMap<ArrayBufferLike, { key: KeyObject; secret: Buffer }>();

function nativeKeyPair(): { publicKey: Uint8Array; secretKey: Uint8Array } {
  const { privateKey } = generateKeyPairSync('x25519');
  const jwk = privateKey.export({ format: 'jwk' });
  // Each in an ArrayBuffer of its own 32 bytes, as tweetnacl's: werift reads them through `.buffer`.
  const secretKey = new Uint8Array(Buffer.from(jwk.d ?? '', 'base64url'));
  const publicKey = new Uint8Array(Buffer.from(jwk.x ?? '', 'base64url'));
  generated.set(secretKey.buffer, { key: privateKey, secret: Buffer.from(secretKey) });
  return { publicKey, secretKey };
}

function x25519PrivateKey(secret: Uint8Array): KeyObject {
  if (secret.byteOffset === 0 && secret.buffer.byteLength === X25519_BYTES) {
    const known = generated.get(secret.buffer);
    if (known && timingSafeEqual(known.secret, secret)) return known.key;
  }
  return createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, secret]), format: 'der', type: 'pkcs8' });
}

/**
 * X25519 (RFC 7748) as tweetnacl's `scalarMult(secret, public)`: both clamp the secret and ignore the public
 * key's top bit. One difference, on purpose: a public key of small order gives an all-zero secret, which OpenSSL
 * refuses (it throws) where tweetnacl returned zeros; RFC 8422 §5.11 has a TLS implementation abort the handshake
 * then, and werift turns the exception into a failed DTLS transport.
 */
function nativeScalarMult(original: ScalarMult): ScalarMult {
  return (n, p) => {
    if (!(n instanceof Uint8Array && p instanceof Uint8Array && n.length === X25519_BYTES && p.length === X25519_BYTES))
      return original(n, p); // tweetnacl's own errors for the wrong types and sizes
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(p.buffer, p.byteOffset, p.length).toString('base64url') },
      format: 'jwk',
    });
    return new Uint8Array(diffieHellman({ privateKey: x25519PrivateKey(n), publicKey }));
  };
}

/**
 * The certificate's private key as a KeyObject, by its PEM: werift hands OpenSSL the PEM at every signature, and
 * the process has one certificate (werift makes it once; docs/voice.md#join-admission). Only EC and RSA keys, the
 * ones werift signs with node's `createSign`; others keep their own signer. A few entries at most.
 */
const signingKeys = new Map<string, KeyObject | null>();
const SIGNING_KEYS_KEPT = 8;

function signingKey(pem: string): KeyObject | null {
  let key = signingKeys.get(pem);
  if (key === undefined) {
    const parsed = createPrivateKey(pem);
    key = parsed.asymmetricKeyType === 'ec' || parsed.asymmetricKeyType === 'rsa' ? parsed : null;
    if (signingKeys.size >= SIGNING_KEYS_KEPT) signingKeys.clear();
    signingKeys.set(pem, key);
  }
  return key;
}

/**
 * `createSign(hash).update(data).sign(pem)` with the KeyObject made once: the same algorithm and encoding (DER
 * ECDSA signature, PKCS#1 v1.5 for RSA). Used by werift's ServerKeyExchange (`generateKeySignature` calls
 * `localPrivateKey.sign`) and CertificateVerify (`signatureData`).
 */
function nativeSign(original: Sign): Sign {
  return function (this: FidmPrivateKey, data, hashAlgorithm) {
    const key = signingKey(this.toPEM());
    return key ? sign(hashAlgorithm, data, key) : original.call(this, data, hashAlgorithm);
  };
}

function nativeSignatureData(original: SignatureData): SignatureData {
  return function (this: CipherContext, data, hash) {
    const key = signingKey(this.localPrivateKey.toPEM());
    return key ? sign(hash, data, key) : original.call(this, data, hash);
  };
}

/**
 * werift's parse of the certificate and its key (`@fidm/x509`, ASN.1 in JavaScript, 0.1–0.3 ms), once per
 * certificate rather than in every DTLS socket's `CipherContext`: the results are only read (the certificate is
 * copied into each Certificate message, the key only signs), so the contexts can share them. A few entries at most.
 */
const parsedCertificates = new Map<string, Pick<CipherContext, 'localCert' | 'localPrivateKey'>>();

function parseOnce(original: ParseX509): ParseX509 {
  return function (this: CipherContext, certPem, keyPem, signatureHash) {
    const key = `${certPem}\n${keyPem}`;
    const parsed = parsedCertificates.get(key);
    if (!parsed) {
      original.call(this, certPem, keyPem, signatureHash);
      if (parsedCertificates.size >= SIGNING_KEYS_KEPT) parsedCertificates.clear();
      parsedCertificates.set(key, { localCert: this.localCert, localPrivateKey: this.localPrivateKey });
      return;
    }
    this.localCert = parsed.localCert;
    this.localPrivateKey = parsed.localPrivateKey;
    this.signatureHashAlgorithm = signatureHash;
  };
}

interface Targets {
  nacl: Tweetnacl;
  privateKey: FidmX509['PrivateKey']['prototype'];
  cipherContext: { signatureData: Replacement<SignatureData>; parseX509: Replacement<ParseX509> };
}

/** What werift uses, as werift resolves it (its own dependencies, so the very module objects its bundle imported). */
function targets(): Targets {
  const fromWerift = createRequire(import.meta.resolve('werift'));
  const nacl = fromWerift('tweetnacl') as Partial<Tweetnacl>;
  const x509 = fromWerift('@fidm/x509') as Partial<FidmX509>;
  const missing = [
    typeof nacl.scalarMult === 'function' ? '' : 'tweetnacl.scalarMult',
    typeof nacl.box?.keyPair === 'function' ? '' : 'tweetnacl.box.keyPair',
    typeof x509.PrivateKey?.prototype.sign === 'function' ? '' : '@fidm/x509 PrivateKey.prototype.sign',
    typeof CipherContext.prototype.signatureData === 'function' ? '' : 'werift CipherContext.prototype.signatureData',
    typeof CipherContext.prototype.parseX509 === 'function' ? '' : 'werift CipherContext.prototype.parseX509',
  ].filter(Boolean);
  // A werift upgrade that moved these must not silently bring back the slow handshake: voice then fails to load.
  if (missing.length > 0 || !nacl.scalarMult || !nacl.box || !x509.PrivateKey)
    throw new Error(`werift-native-crypto: werift no longer uses ${missing.join(', ')} (docs/voice.md#join-admission)`);
  return {
    nacl: nacl as Tweetnacl,
    privateKey: x509.PrivateKey.prototype,
    cipherContext: CipherContext.prototype as unknown as Targets['cipherContext'],
  };
}

/** The replacement, with the original's own properties (`scalarMult.base`, `keyPair.fromSecretKey`) and the original. */
function replacement<F extends object>(original: F, made: F): Replacement<F> {
  return Object.assign(made, original, { [REPLACED]: original });
}

/**
 * Puts the native functions in place; once per process (a second call, from another copy of this module too, finds
 * them there). Called where werift is first loaded (`participant.ts`), before the first handshake. Throws when
 * werift's dependencies no longer have what it replaces.
 */
export function installNativeDtlsCrypto(): void {
  const { nacl, privateKey, cipherContext } = targets();
  if (!nacl.scalarMult[REPLACED]) nacl.scalarMult = replacement(nacl.scalarMult, nativeScalarMult(nacl.scalarMult));
  if (!nacl.box.keyPair[REPLACED]) nacl.box.keyPair = replacement(nacl.box.keyPair, () => nativeKeyPair());
  if (!privateKey.sign[REPLACED]) privateKey.sign = replacement(privateKey.sign, nativeSign(privateKey.sign));
  if (!cipherContext.signatureData[REPLACED])
    cipherContext.signatureData = replacement(
      cipherContext.signatureData,
      nativeSignatureData(cipherContext.signatureData),
    );
  if (!cipherContext.parseX509[REPLACED])
    cipherContext.parseX509 = replacement(cipherContext.parseX509, parseOnce(cipherContext.parseX509));
}

/** Puts werift's own functions back (the before/after bench and the tests; the server never does). */
export function uninstallNativeDtlsCrypto(): void {
  const { nacl, privateKey, cipherContext } = targets();
  nacl.scalarMult = nacl.scalarMult[REPLACED] ?? nacl.scalarMult;
  nacl.box.keyPair = nacl.box.keyPair[REPLACED] ?? nacl.box.keyPair;
  privateKey.sign = privateKey.sign[REPLACED] ?? privateKey.sign;
  cipherContext.signatureData = cipherContext.signatureData[REPLACED] ?? cipherContext.signatureData;
  cipherContext.parseX509 = cipherContext.parseX509[REPLACED] ?? cipherContext.parseX509;
}

/** Whether every replacement is in place. */
export function nativeDtlsCryptoInstalled(): boolean {
  const { nacl, privateKey, cipherContext } = targets();
  const replaced = [
    nacl.scalarMult,
    nacl.box.keyPair,
    privateKey.sign,
    cipherContext.signatureData,
    cipherContext.parseX509,
  ];
  return replaced.every((f) => REPLACED in f);
}
