import assert from 'node:assert/strict';
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import {
  CipherContext,
  DtlsClient,
  DtlsServer,
  type DtlsSocket,
  HashAlgorithm,
  NamedCurveAlgorithm,
  ProtectionProfileAeadAes128Gcm,
  SignatureAlgorithm,
} from 'werift';
import {
  installNativeDtlsCrypto,
  nativeDtlsCryptoInstalled,
  uninstallNativeDtlsCrypto,
} from '../../src/domains/voice/sfu/werift-native-crypto.ts';
import { memoryTransportPair } from '../support/memory-transport.ts';

/**
 * The SFU's DTLS public-key work on node:crypto (docs/voice.md#join-admission) against werift's own: X25519 gives
 * tweetnacl's shared secret on random keys, the signatures verify, and a real werift handshake (both roles) goes
 * through every replacement — so a werift upgrade that stops calling them fails here.
 */

type ScalarMult = ((n: Uint8Array, p: Uint8Array) => Uint8Array) & { base: (n: Uint8Array) => Uint8Array };
type KeyPair = () => { publicKey: Uint8Array; secretKey: Uint8Array };
interface Nacl {
  scalarMult: ScalarMult;
  box: { keyPair: KeyPair & { fromSecretKey: unknown } };
}
interface FidmPrivateKeyClass {
  prototype: { sign: (data: Buffer, hash: string) => Buffer };
}
interface FidmCertificateClass {
  fromPEM(pem: Buffer): { raw: Buffer; publicKey: { verify(data: Buffer, signature: Buffer, hash: string): boolean } };
}

const fromWerift = createRequire(import.meta.resolve('werift'));
const nacl = fromWerift('tweetnacl') as Nacl;
const x509 = fromWerift('@fidm/x509') as { PrivateKey: FidmPrivateKeyClass; Certificate: FidmCertificateClass };
const signatureHash = { signature: SignatureAlgorithm.ecdsa_3, hash: HashAlgorithm.sha256_4 };

let original: { scalarMult: ScalarMult; keyPair: KeyPair };
let wasInstalled: boolean;
let certificate: { certPem: string; keyPem: string };

before(async () => {
  // This process may already run the SFU (test files share processes): werift's own functions are taken from
  // behind the replacement, and the state is left as found.
  wasInstalled = nativeDtlsCryptoInstalled();
  uninstallNativeDtlsCrypto();
  original = { scalarMult: nacl.scalarMult, keyPair: nacl.box.keyPair };
  installNativeDtlsCrypto();
  certificate = await CipherContext.createSelfSignedCertificateWithKey(signatureHash, NamedCurveAlgorithm.x25519_29);
});
after(() => {
  if (!wasInstalled) uninstallNativeDtlsCrypto();
});

describe('werift DTLS on node:crypto', () => {
  it('is installed, once, with the originals’ own properties', () => {
    assert.equal(nativeDtlsCryptoInstalled(), true);
    const installed = [nacl.scalarMult, nacl.box.keyPair, x509.PrivateKey.prototype.sign];
    installNativeDtlsCrypto();
    assert.deepEqual([nacl.scalarMult, nacl.box.keyPair, x509.PrivateKey.prototype.sign], installed);
    assert.notEqual(nacl.scalarMult, original.scalarMult);
    assert.equal(nacl.scalarMult.base, original.scalarMult.base);
    assert.equal(typeof nacl.box.keyPair.fromSecretKey, 'function');
  });

  it('loading fails loudly, naming what is gone, when werift’s dependencies no longer have a target', () => {
    const keyPair = nacl.box.keyPair;
    const signatureData = CipherContext.prototype.signatureData;
    Reflect.deleteProperty(nacl.box, 'keyPair');
    Reflect.deleteProperty(CipherContext.prototype, 'signatureData');
    try {
      assert.throws(() => installNativeDtlsCrypto(), {
        message:
          'werift-native-crypto: werift no longer uses tweetnacl.box.keyPair, werift CipherContext.prototype.signatureData' +
          ' (docs/voice.md#join-admission)',
      });
    } finally {
      nacl.box.keyPair = keyPair;
      CipherContext.prototype.signatureData = signatureData;
    }
    assert.equal(nativeDtlsCryptoInstalled(), true);
  });

  it('X25519: the same shared secret as tweetnacl on random keys, either way round', () => {
    for (let i = 0; i < 64; i++) {
      // Unclamped secrets, as tweetnacl's keyPair makes them; any 32 bytes as a peer's public key (top bit too).
      const a = randomBytes(32);
      const b = randomBytes(32);
      const publicB = original.scalarMult.base(b);
      const expected = Buffer.from(original.scalarMult(a, publicB));
      assert.deepEqual(Buffer.from(nacl.scalarMult(a, publicB)), expected);
      assert.deepEqual(Buffer.from(nacl.scalarMult(b, original.scalarMult.base(a))), expected);
      const anyPoint = randomBytes(32);
      assert.deepEqual(Buffer.from(nacl.scalarMult(a, anyPoint)), Buffer.from(original.scalarMult(a, anyPoint)));
    }
  });

  it('X25519: a generated pair is consistent for tweetnacl and held as werift reads it', () => {
    for (let i = 0; i < 16; i++) {
      const pair = nacl.box.keyPair();
      assert.equal(pair.secretKey.buffer.byteLength, 32);
      assert.equal(pair.publicKey.buffer.byteLength, 32);
      assert.deepEqual(Buffer.from(original.scalarMult.base(pair.secretKey)), Buffer.from(pair.publicKey));
      const peer = original.keyPair();
      // werift keeps `Buffer.from(secretKey.buffer)` and passes that back.
      const secret = Buffer.from(pair.secretKey.buffer);
      assert.deepEqual(
        Buffer.from(nacl.scalarMult(secret, peer.publicKey)),
        Buffer.from(original.scalarMult(peer.secretKey, pair.publicKey)),
      );
    }
  });

  it('X25519: a small-order public key aborts (RFC 8422 §5.11) where tweetnacl gave zeros; bad sizes as before', () => {
    const secret = randomBytes(32);
    assert.deepEqual(Buffer.from(original.scalarMult(secret, Buffer.alloc(32))), Buffer.alloc(32));
    assert.throws(() => nacl.scalarMult(secret, Buffer.alloc(32)), { code: 'ERR_OSSL_FAILED_DURING_DERIVATION' });
    assert.throws(() => nacl.scalarMult(secret, Buffer.alloc(31)), { message: 'bad p size' });
  });

  it('ECDSA: werift’s signatures (key exchange and certificate verify) verify, DER-encoded', () => {
    const context = new CipherContext(2, certificate.certPem, certificate.keyPem, signatureHash);
    const data = randomBytes(200);
    const publicKey = createPublicKey(certificate.certPem);
    const peerView = x509.Certificate.fromPEM(Buffer.from(certificate.certPem)).publicKey;
    for (const signature of [context.localPrivateKey.sign(data, 'sha256'), context.signatureData(data, 'sha256')]) {
      assert.equal(signature[0], 0x30); // an ASN.1 SEQUENCE (r, s)
      assert.equal(verify('sha256', data, publicKey, signature), true);
      assert.equal(peerView.verify(data, signature, 'sha256'), true);
      assert.equal(verify('sha256', randomBytes(200), publicKey, signature), false);
    }
  });

  it('the certificate is parsed once: later contexts share werift’s own parse of it', () => {
    const first = new CipherContext(2, certificate.certPem, certificate.keyPem, signatureHash);
    const second = new CipherContext(1, certificate.certPem, certificate.keyPem, signatureHash);
    assert.equal(second.localPrivateKey, first.localPrivateKey);
    assert.ok(first.localPrivateKey instanceof (x509.PrivateKey as unknown as new () => object));
    assert.deepEqual(second.localCert, x509.Certificate.fromPEM(Buffer.from(certificate.certPem)).raw);
    assert.deepEqual(second.signatureHashAlgorithm, signatureHash);
  });

  it('a werift handshake (server and client) goes through every replacement and both sides agree', async () => {
    const calls = { keyPair: 0, scalarMult: 0, sign: 0, signatureData: 0 };
    const installed = {
      keyPair: nacl.box.keyPair,
      scalarMult: nacl.scalarMult,
      sign: x509.PrivateKey.prototype.sign,
      signatureData: CipherContext.prototype.signatureData,
    };
    nacl.box.keyPair = Object.assign(() => {
      calls.keyPair++;
      return installed.keyPair();
    }, installed.keyPair);
    nacl.scalarMult = Object.assign((n: Uint8Array, p: Uint8Array) => {
      calls.scalarMult++;
      return installed.scalarMult(n, p);
    }, installed.scalarMult);
    x509.PrivateKey.prototype.sign = function (this: unknown, data: Buffer, hash: string) {
      calls.sign++;
      return installed.sign.call(this, data, hash);
    };
    CipherContext.prototype.signatureData = function (this: CipherContext, data: Buffer, hash: string) {
      calls.signatureData++;
      return installed.signatureData.call(this, data, hash);
    };
    try {
      const { server, client } = await handshake(certificate);
      // The server makes a key pair at each cookie-less ClientHello; the client one at the ServerKeyExchange.
      assert.ok(calls.keyPair >= 2, `key pairs: ${calls.keyPair}`);
      assert.deepEqual([calls.scalarMult, calls.sign, calls.signatureData], [2, 1, 1]);
      assert.deepEqual(
        server.exportKeyingMaterial('EXTRACTOR-dtls_srtp', 28),
        client.exportKeyingMaterial('EXTRACTOR-dtls_srtp', 28),
      );
      server.close();
      client.close();
    } finally {
      Object.assign(nacl.box, { keyPair: installed.keyPair });
      nacl.scalarMult = installed.scalarMult;
      x509.PrivateKey.prototype.sign = installed.sign;
      CipherContext.prototype.signatureData = installed.signatureData;
    }
  });
});

/** A DTLS server and client (each with the certificate, the server asking for the client's) over memory. */
async function handshake(cert: {
  certPem: string;
  keyPem: string;
}): Promise<{ server: DtlsSocket; client: DtlsSocket }> {
  const ends = memoryTransportPair();
  const common = {
    cert: cert.certPem,
    key: cert.keyPem,
    signatureHash,
    srtpProfiles: [ProtectionProfileAeadAes128Gcm],
  };
  const server = new DtlsServer({
    ...common,
    transport: ends[0],
    extendedMasterSecret: true,
    certificateRequest: true,
  });
  const client = new DtlsClient({ ...common, transport: ends[1], extendedMasterSecret: true });
  const connected = (socket: DtlsSocket) =>
    new Promise<void>((resolve, reject) => {
      socket.onConnect.once(() => resolve());
      socket.onError.once(reject);
    });
  const both = Promise.all([connected(server), connected(client)]);
  // Not awaited: werift's first flight resolves only after its retransmission interval; `both` carries its errors.
  client.connect().catch(() => {});
  await both;
  return { server, client };
}
