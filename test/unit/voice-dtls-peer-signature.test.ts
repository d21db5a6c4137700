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
  checkPeerSignatureHooks,
  PeerSignatureError,
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
function corrupt(signature: Buffer): Buffer {
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

describe('the DTLS peer’s handshake signature (docs/voice.md#join-admission)', () => {
  it('werift has the parts the check hooks', () => {
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
    const seen = await pair.outcome;
    assert.deepEqual(seen.connected, []);
    assert.deepEqual(seen.failed, ['server']);
    // A fatal decrypt_error alert in the clear, and no Finished (the only handshake record at epoch 1).
    assert.deepEqual(records(pair.sent.server, ALERT), [[0, '0233']]);
    assert.deepEqual(
      records(pair.sent.server, HANDSHAKE).filter(([epoch]) => epoch > 0),
      [],
    );
    assert.deepEqual(
      refusals.map((e) => [e.message, e.alert]),
      [['CertificateVerify signature does not verify', 51]],
    );
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
