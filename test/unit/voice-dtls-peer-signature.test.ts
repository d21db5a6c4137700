import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
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
  checkCertificateVerify,
  checkClientFinished,
  checkPeerSignatureHooks,
  checkServerFinished,
  finishedVerifyData,
  PeerSignatureError,
  prfSha256,
  verifyPeerSignatures,
} from '../../src/domains/voice/sfu/dtls-peer-signature.ts';
import { memoryTransportPair } from '../support/memory-transport.ts';

/**
 * The check werift does not make (docs/voice.md#join-admission): the DTLS peer's handshake signature — the
 * client's CertificateVerify for the SFU's server role, the ServerKeyExchange's for the client role — on real
 * werift handshakes over memory, with the signature corrupted on one side.
 */

const signatureHash = { signature: SignatureAlgorithm.ecdsa_3, hash: HashAlgorithm.sha256_4 };
type Certificate = { certPem: string; keyPem: string };
let serverCertificate: Certificate;
let clientCertificate: Certificate;

before(async () => {
  serverCertificate = await CipherContext.createSelfSignedCertificateWithKey(
    signatureHash,
    NamedCurveAlgorithm.x25519_29,
  );
  clientCertificate = await CipherContext.createSelfSignedCertificateWithKey(
    signatureHash,
    NamedCurveAlgorithm.x25519_29,
  );
});

interface Sockets {
  server: DtlsServer;
  client: DtlsClient;
  /** Settles when both sides are connected, or a moment after the first side's error. */
  outcome: Promise<{ connected: string[]; failed: string[] }>;
  /** The datagrams each side sent. */
  sent: { server: Buffer[]; client: Buffer[] };
}

/** Records of one type in datagrams: `[epoch, body]` (RFC 6347 §4.1: 13-byte header, length at 11). */
function records(datagrams: Buffer[], type: number): [number, string][] {
  const found: [number, string][] = [];
  for (const datagram of datagrams)
    for (let at = 0; at + 13 <= datagram.length; at += 13 + datagram.readUInt16BE(at + 11))
      if (datagram[at] === type)
        found.push([
          datagram.readUInt16BE(at + 3),
          datagram.subarray(at + 13, at + 13 + datagram.readUInt16BE(at + 11)).toString('hex'),
        ]);
  return found;
}
const ALERT = 21;
const HANDSHAKE = 22;

/** A flipped last byte: still a well-formed DER ECDSA signature, by the right key, over the wrong value. */
function corrupt(signature: Buffer): Buffer<ArrayBuffer> {
  const copy = Buffer.from(signature);
  copy[copy.length - 1] = (copy[copy.length - 1] ?? 0) ^ 1;
  return copy;
}

function sockets(): Sockets {
  const ends = memoryTransportPair();
  const common = { signatureHash, srtpProfiles: [ProtectionProfileAeadAes128Gcm], extendedMasterSecret: true };
  const server = new DtlsServer({
    ...common,
    cert: serverCertificate.certPem,
    key: serverCertificate.keyPem,
    transport: ends[0],
    certificateRequest: true,
  });
  const client = new DtlsClient({
    ...common,
    cert: clientCertificate.certPem,
    key: clientCertificate.keyPem,
    transport: ends[1],
  });
  const sent = { server: ends[0].sent, client: ends[1].sent };
  const seen = { connected: [] as string[], failed: [] as string[] };
  const outcome = new Promise<typeof seen>((resolve) => {
    const watch = (name: string, socket: DtlsSocket) => {
      socket.onConnect.once(() => {
        seen.connected.push(name);
        if (seen.connected.length === 2) resolve(seen);
      });
      socket.onError.once(() => {
        seen.failed.push(name);
        // Whatever the other side does next (an alert, its own retransmissions) has a moment to arrive.
        setTimeout(() => resolve(seen), 300);
      });
    };
    watch('server', server);
    watch('client', client);
  });
  return { server, client, outcome, sent };
}

function start({ server, client }: Sockets): void {
  // Not awaited: werift's first flight resolves only after its retransmission interval.
  client.connect().catch(() => {});
  void server;
}

/**
 * The server refused the handshake: neither side connected, the server failed, sent one fatal decrypt_error alert
 * in the clear and no Finished (the only handshake record at epoch 1), and the check reported `message`.
 */
function assertServerRefused(
  pair: Sockets,
  seen: { connected: string[]; failed: string[] },
  refusals: PeerSignatureError[],
  message: string,
): void {
  assert.deepEqual(seen.connected, []);
  assert.deepEqual(seen.failed, ['server']);
  assert.deepEqual(records(pair.sent.server, ALERT), [[0, '0233']]);
  assert.deepEqual(
    records(pair.sent.server, HANDSHAKE).filter(([epoch]) => epoch > 0),
    [],
  );
  assert.deepEqual(
    refusals.map((e) => [e.message, e.alert]),
    [[message, 51]],
  );
}

describe('the DTLS peer’s handshake signature (docs/voice.md#join-admission)', () => {
  it('werift has the parts the check hooks', () => {
    assert.doesNotThrow(() => checkPeerSignatureHooks());
  });

  it('the load-time check throws when werift’s client would make its Finished another way', () => {
    const original = CipherContext.prototype.verifyData;
    CipherContext.prototype.verifyData = function (this: CipherContext, buf: Buffer) {
      return original.call(this, Buffer.concat([buf, Buffer.from([0])]));
    };
    try {
      assert.throws(() => checkPeerSignatureHooks(), /DtlsClient\.cipher\.verifyData as TLS 1\.2's PRF-SHA256/);
    } finally {
      CipherContext.prototype.verifyData = original;
    }
    assert.doesNotThrow(() => checkPeerSignatureHooks());
  });

  it('a genuine handshake connects, both sides checking, and agrees on its keys', async () => {
    const pair = sockets();
    const refusals: PeerSignatureError[] = [];
    verifyPeerSignatures(pair.server, (e) => refusals.push(e));
    verifyPeerSignatures(pair.client, (e) => refusals.push(e));
    start(pair);
    const seen = await pair.outcome;
    assert.deepEqual(seen, { connected: ['server', 'client'], failed: [] });
    assert.deepEqual(records([...pair.sent.server, ...pair.sent.client], ALERT), []);
    assert.deepEqual(refusals, []);
    assert.deepEqual(
      pair.server.exportKeyingMaterial('EXTRACTOR-dtls_srtp', 28),
      pair.client.exportKeyingMaterial('EXTRACTOR-dtls_srtp', 28),
    );
    // On the server's own cache, the same check passes, and fails on any other bytes or certificate.
    const handshakes = (pair.server as unknown as { dtls: { sortedHandshakeCache: CachedHandshake[] } }).dtls
      .sortedHandshakeCache;
    const clientDer = pair.server.remoteCertificate;
    assert.ok(clientDer);
    assert.doesNotThrow(() => checkCertificateVerify(handshakes, clientDer));
    const serverDer = (pair.client as unknown as { cipher: { remoteCertificate: Buffer } }).cipher.remoteCertificate;
    assert.throws(() => checkCertificateVerify(handshakes, serverDer), /CertificateVerify signature does not verify/);
    const altered = handshakes.map((h, i) =>
      i === 0 ? { ...h, serialize: () => corrupt(h.serialize()) } : h,
    ) as CachedHandshake[];
    assert.throws(() => checkCertificateVerify(altered, clientDer), /does not verify/);
    const withoutVerify = handshakes.filter((h) => h.msg_type !== 15);
    assert.throws(() => checkCertificateVerify(withoutVerify, clientDer), /without CertificateVerify/);
    // The client's Finished: it verifies with the server's master secret over its own cache, not otherwise.
    const masterSecret = (pair.server as unknown as { cipher: { masterSecret: Buffer } }).cipher.masterSecret;
    assert.equal(masterSecret.length, 48);
    assert.doesNotThrow(() => checkClientFinished(handshakes, masterSecret));
    assert.throws(() => checkClientFinished(handshakes, corrupt(masterSecret)), /client Finished does not verify/);
    assert.throws(() => checkClientFinished(altered, masterSecret), /client Finished does not verify/);
    assert.throws(
      () =>
        checkClientFinished(
          handshakes.filter((h) => h.msg_type !== 20),
          masterSecret,
        ),
      /no client Finished/,
    );
    assert.throws(() => checkClientFinished(handshakes, undefined), /no client Finished or master secret/);
    // The server's Finished, on the client's cache (its own Finished included): it is the one the server sent.
    const clientCache = (pair.client as unknown as { dtls: { sortedHandshakeCache: CachedHandshake[] } }).dtls
      .sortedHandshakeCache;
    // (The server's cache ends with its own Finished, sent over everything before it.)
    assert.deepEqual(handshakes.filter((h) => h.msg_type === 20).length, 2);
    assert.equal(handshakes.at(-1)?.msg_type, 20);
    const serverFinished = (pair.server as unknown as { cipher: CipherContext }).cipher.verifyData(
      Buffer.concat(handshakes.slice(0, -1).map((h) => h.serialize())),
    );
    assert.deepEqual(serverFinished, handshakes.at(-1)?.fragment);
    assert.doesNotThrow(() => checkServerFinished(clientCache, masterSecret, serverFinished));
    assert.throws(() => checkServerFinished(clientCache, masterSecret, corrupt(serverFinished)), /server Finished/);
    assert.throws(
      () =>
        checkServerFinished(
          clientCache.filter((h) => h.msg_type !== 20),
          masterSecret,
          serverFinished,
        ),
      /no own Finished/,
    );
    pair.server.close();
    pair.client.close();
  });

  it('as server: a client whose CertificateVerify does not verify is refused with an alert, never connected', async () => {
    const pair = sockets();
    const refusals: PeerSignatureError[] = [];
    verifyPeerSignatures(pair.server, (e) => refusals.push(e));
    const cipher = (pair.client as unknown as { cipher: CipherContext }).cipher;
    cipher.signatureData = (data: Buffer, hash: string) =>
      corrupt(CipherContext.prototype.signatureData.call(cipher, data, hash));
    start(pair);
    assertServerRefused(pair, await pair.outcome, refusals, 'CertificateVerify signature does not verify');
    pair.server.close();
    pair.client.close();
  });

  it('without the check, werift’s server connects that same client (the gap)', async () => {
    const pair = sockets();
    const cipher = (pair.client as unknown as { cipher: CipherContext }).cipher;
    cipher.signatureData = (data: Buffer, hash: string) =>
      corrupt(CipherContext.prototype.signatureData.call(cipher, data, hash));
    start(pair);
    const seen = await pair.outcome;
    assert.deepEqual(seen.connected, ['server', 'client']);
    assert.deepEqual(records(pair.sent.server, ALERT), []);
    pair.server.close();
    pair.client.close();
  });

  it('as server: a client whose Finished verify_data has one flipped byte is refused with an alert, never connected', async () => {
    const pair = sockets();
    const refusals: PeerSignatureError[] = [];
    verifyPeerSignatures(pair.server, (e) => refusals.push(e));
    // The plaintext verify_data is altered before werift encrypts the Finished: the record decrypts fine.
    const cipher = (pair.client as unknown as { cipher: CipherContext }).cipher;
    let made = 0;
    cipher.verifyData = (buf: Buffer) => {
      made++;
      return corrupt(CipherContext.prototype.verifyData.call(cipher, buf));
    };
    start(pair);
    const seen = await pair.outcome;
    assert.equal(made, 1, 'the client made one Finished');
    assertServerRefused(pair, seen, refusals, 'client Finished does not verify');
    pair.server.close();
    pair.client.close();
  });

  it('as server: a client whose Finished covers another transcript (one flipped byte) is refused', async () => {
    const pair = sockets();
    const refusals: PeerSignatureError[] = [];
    verifyPeerSignatures(pair.server, (e) => refusals.push(e));
    const cipher = (pair.client as unknown as { cipher: CipherContext }).cipher;
    cipher.verifyData = (buf: Buffer) => CipherContext.prototype.verifyData.call(cipher, corrupt(buf));
    start(pair);
    assertServerRefused(pair, await pair.outcome, refusals, 'client Finished does not verify');
    pair.server.close();
    pair.client.close();
  });

  it('without the check, werift’s server connects a client whose Finished is wrong (the gap)', async () => {
    const pair = sockets();
    const cipher = (pair.client as unknown as { cipher: CipherContext }).cipher;
    cipher.verifyData = (buf: Buffer) => corrupt(CipherContext.prototype.verifyData.call(cipher, buf));
    start(pair);
    const seen = await pair.outcome;
    assert.deepEqual(seen.connected, ['server', 'client']);
    assert.deepEqual(records(pair.sent.server, ALERT), []);
    pair.server.close();
    pair.client.close();
  });

  it('as client: a server whose Finished verify_data has one flipped byte is refused, never connected', async () => {
    const pair = sockets();
    const refusals: PeerSignatureError[] = [];
    verifyPeerSignatures(pair.client, (e) => refusals.push(e));
    const cipher = (pair.server as unknown as { cipher: CipherContext }).cipher;
    cipher.verifyData = (buf: Buffer) => corrupt(CipherContext.prototype.verifyData.call(cipher, buf));
    start(pair);
    const seen = await pair.outcome;
    // werift's server calls itself connected once it has sent its Finished; the client does not.
    assert.deepEqual(seen, { connected: ['server'], failed: ['client'] });
    assert.equal(pair.client.connected, false);
    assert.deepEqual(
      refusals.map((e) => [e.message, e.alert]),
      [['server Finished does not verify', 51]],
    );
    pair.server.close();
    pair.client.close();
  });

  it('without the check, werift’s client connects to a server whose Finished is wrong (the gap)', async () => {
    const pair = sockets();
    const cipher = (pair.server as unknown as { cipher: CipherContext }).cipher;
    cipher.verifyData = (buf: Buffer) => corrupt(CipherContext.prototype.verifyData.call(cipher, buf));
    start(pair);
    const seen = await pair.outcome;
    assert.deepEqual(seen, { connected: ['server', 'client'], failed: [] });
    pair.server.close();
    pair.client.close();
  });

  it('the PRF is TLS 1.2’s (a published P_SHA256 vector) and werift’s client Finished is made with it', () => {
    const out = prfSha256(
      Buffer.from('9bbe436ba940f017b17652849a71db35', 'hex'),
      'test label',
      Buffer.from('a0ba9f936cda311827a6f796ffd5198c', 'hex'),
      100,
    );
    assert.equal(
      out.toString('hex'),
      'e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a6b301791e90d35c9c9a46b4e14baf9af0fa022f7' +
        '077def17abfd3797c0564bab4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff70187347b66',
    );
    const client = sockets().client;
    const cipher = (client as unknown as { cipher: CipherContext }).cipher;
    cipher.masterSecret = Buffer.alloc(48, 3);
    const transcript = Buffer.from('any handshake bytes');
    assert.deepEqual(
      Buffer.from(cipher.verifyData(transcript)),
      finishedVerifyData(cipher.masterSecret, 'client', transcript),
    );
    client.close();
  });

  it('as client: a server whose ServerKeyExchange signature does not verify is refused before the Finished', async () => {
    const pair = sockets();
    const refusals: PeerSignatureError[] = [];
    verifyPeerSignatures(pair.client, (e) => refusals.push(e));
    const cipher = (pair.server as unknown as { cipher: CipherContext }).cipher;
    cipher.generateKeySignature = (hash: string) =>
      corrupt(CipherContext.prototype.generateKeySignature.call(cipher, hash));
    start(pair);
    const seen = await pair.outcome;
    assert.deepEqual(seen.connected, []);
    assert.deepEqual(seen.failed, ['client']);
    assert.deepEqual(records(pair.sent.client, ALERT), [[0, '0233']]);
    // The client sent nothing of its last flight: it is refused while being put together.
    assert.deepEqual(
      records(pair.sent.client, HANDSHAKE).filter(([epoch]) => epoch > 0),
      [],
    );
    assert.deepEqual(
      refusals.map((e) => [e.message, e.alert]),
      [['ServerKeyExchange signature does not verify', 51]],
    );
    pair.server.close();
    pair.client.close();
  });

  it('refuses a socket that is not werift’s', () => {
    assert.throws(() => verifyPeerSignatures({}), /not a werift DTLS socket/);
    assert.ok(new PeerSignatureError('x', 40) instanceof Error);
  });
});

interface CachedHandshake {
  msg_type: number;
  fragment: Buffer;
  serialize(): Buffer;
}
